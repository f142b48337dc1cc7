/**
 * Who a member is (docs/identity-linking.md, "Members"): one person's **account**, with every **identity**
 * (a platform user or an email) linked to it. Events are recorded under the identity that earned them;
 * wallets, streaks and redemptions belong to the account. Both keys are strings, and reading one where the
 * other was meant gave linked members different answers on different surfaces (issue 34): the brands below
 * let the compiler tell them apart. Only the account resolver (core-api modules/accounts) makes an
 * `AccountKey` or a `Member`.
 */

/** An identity as a request names it: `discord_123@…`, `telegram_…@…`, or an email. */
export type IdentityKey = string & { readonly __brand: 'IdentityKey' };

/** The key of the account an identity belongs to (its primary identity); made only by resolution. */
export type AccountKey = string & { readonly __brand: 'AccountKey' };

/** A resolved member: the account and every identity linked to it (the account's own key first). */
export interface Member {
  readonly accountKey: AccountKey;
  /** Every identity of the account, the account's own key first: what the member's events are recorded under. */
  readonly identityKeys: readonly IdentityKey[];
}

/** A key from a request (a route's `userIdentifier`, a tool's `userId`): an identity, not yet resolved. */
export function identityKeyOf(raw: string): IdentityKey {
  return raw as IdentityKey;
}

/**
 * Agent identities (`agent_<keyId>@agents.pts`, the identity an agent key's rewards are paid to) are users
 * like any other on chain but not members: no count of members, redeemers or earnings includes them.
 * `agent:` is how an agent key signs what it sends or changes (`sent_by`, audit actors), never an identity,
 * and is left out too so that such a value can never pass for a member.
 */
export const AGENT_IDENTITY_PREFIXES = ['agent_', 'agent:'] as const;

/** The one predicate for "is this key an agent's, not a member's?" (its SQL twin: core-api `isMemberKey`). */
export function isAgentKey(key: string): boolean {
  return AGENT_IDENTITY_PREFIXES.some((prefix) => key.startsWith(prefix));
}
