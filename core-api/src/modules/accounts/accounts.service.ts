import { createHash, randomInt } from 'node:crypto';
import {
  type AccountKey,
  type AccountLinkMethod,
  AppError,
  type Clock,
  type ConfirmLinkCodeRequest,
  type IdentityKey,
  type IssueLinkCodeRequest,
  type IssueLinkCodeResponse,
  LINK_CODE_ALPHABET,
  LINK_CODE_LENGTH,
  type LinkEmailRequest,
  type LinkedIdentity,
  type LinkResult,
  type Member,
  parsePlatformIdentity,
  type RevokeLinkCodeRequest,
  type UnlinkIdentityRequest,
  type UnlinkResult,
} from '@pts/shared';
import { type Kysely, sql } from 'kysely';
import type { Logger } from 'pino';
import type { Database } from '../../db/database.ts';
import { isUniqueViolation } from '../../db/errors.ts';
import type { DB } from '../../db/schema.ts';
import { ensureUsers, setUserWallets } from '../users/users.repository.ts';
import type { WalletProvider } from '../wallets/wallet-provider.ts';

/** How long a link code works. */
export const LINK_CODE_TTL_MS = 10 * 60 * 1000;

/**
 * Key of the transaction-scoped advisory lock every link takes: links are rare, and serializing them keeps
 * the "rows always point at a root account" invariant without reasoning about concurrent merges.
 */
const LINK_LOCK_KEY = 7_265_340_001n;

/** What linking needs: the database, the clock, wallets for the account, and a balance read (optional). */
export interface AccountDeps {
  db: Database;
  clock: Clock;
  logger: Logger;
  wallets: WalletProvider;
  /** Live RewardToken balance, to tell the user what stays on a wallet they leave; absent → null. */
  balanceOf?: ((address: `0x${string}`) => Promise<bigint>) | undefined;
}

/**
 * The account an identity belongs to: the account key of its link, or the identity itself when unlinked.
 * Links always point at a root (chains are flattened when made), so one lookup suffices. With accountIdentities
 * and resolveMember, the only maker of an `AccountKey`.
 */
export async function resolveAccountKey(db: Kysely<DB>, userKey: string): Promise<AccountKey> {
  const row = await db
    .selectFrom('account_links')
    .select('account_key')
    .where('identity_key', '=', userKey)
    .executeTakeFirst();
  return (row?.account_key ?? userKey) as AccountKey;
}

/** Batch form of resolveAccountKey: every given key maps to its account (itself when unlinked). */
export async function resolveAccountKeys(db: Kysely<DB>, userKeys: string[]): Promise<Map<string, AccountKey>> {
  const keys = [...new Set(userKeys)];
  const resolved = new Map(keys.map((key) => [key, key as AccountKey]));
  if (keys.length === 0) return resolved;
  const rows = await db
    .selectFrom('account_links')
    .select(['identity_key', 'account_key'])
    .where('identity_key', 'in', keys)
    .execute();
  for (const row of rows) resolved.set(row.identity_key, row.account_key as AccountKey);
  return resolved;
}

/** The account key and every identity linked to it (the account first), in one statement. */
export async function accountIdentities(
  db: Kysely<DB>,
  identityKey: string,
): Promise<{ accountKey: AccountKey; identities: LinkedIdentity[] }> {
  const result = await sql<{
    account_key: string;
    identity_key: string | null;
    method: 'code' | 'email' | null;
    linked_at: Date | string | null;
  }>`
    SELECT a.k AS account_key, l.identity_key, l.method, l.linked_at
      FROM (SELECT coalesce((SELECT account_key FROM account_links WHERE identity_key = ${identityKey}), ${identityKey}) AS k) a
      LEFT JOIN account_links l ON l.account_key = a.k
     ORDER BY l.linked_at, l.identity_key`.execute(db);
  const accountKey = (result.rows[0]?.account_key ?? identityKey) as AccountKey;
  return {
    accountKey,
    identities: [
      { identityKey: accountKey, platform: platformOf(accountKey), primary: true, method: null, linkedAt: null },
      ...result.rows.flatMap((row) =>
        row.identity_key === null
          ? []
          : [
              {
                identityKey: row.identity_key,
                platform: platformOf(row.identity_key),
                primary: false,
                method: row.method,
                linkedAt: new Date(row.linked_at as Date | string).toISOString(),
              },
            ],
      ),
    ],
  };
}

/**
 * The member an identity belongs to (docs/identity-linking.md, "Members"): its account and every identity
 * linked to it, in one statement. Each edge (a route, a tool) resolves its caller once with this and hands the
 * `Member` to the ledger reads, which take nothing else.
 */
export async function resolveMember(db: Kysely<DB>, identityKey: IdentityKey | string): Promise<Member> {
  const { accountKey, identities } = await accountIdentities(db, identityKey);
  return memberOf(accountKey, identities);
}

/** The `Member` of an accountIdentities answer, for a caller that shows the identities too. */
export function memberOf(accountKey: AccountKey, identities: readonly Pick<LinkedIdentity, 'identityKey'>[]): Member {
  return { accountKey, identityKeys: identities.map((identity) => identity.identityKey as IdentityKey) };
}

function platformOf(key: string): string {
  return parsePlatformIdentity(key)?.platform ?? 'email';
}

/** SHA-256 of a normalized code: codes are stored hashed, so a database read does not reveal live codes. */
export function hashLinkCode(code: string): string {
  return createHash('sha256').update(`pts-link-code:${code}`).digest('hex');
}

/** A fresh code from the CSPRNG (`crypto.randomInt`): 8 symbols of 31, about 40 bits. */
export function generateLinkCode(): string {
  let code = '';
  for (let i = 0; i < LINK_CODE_LENGTH; i++) code += LINK_CODE_ALPHABET[randomInt(LINK_CODE_ALPHABET.length)];
  return code;
}

/**
 * `POST /services/link/code`: a single-use code for this identity, valid 10 minutes. Issuing again replaces
 * the identity's unused code (one active per identity; the partial unique index enforces it under
 * concurrency). The identity whose account the confirmer joins is resolved when the code is confirmed.
 */
export async function issueLinkCode(
  deps: Pick<AccountDeps, 'db' | 'clock'>,
  input: IssueLinkCodeRequest,
): Promise<IssueLinkCodeResponse> {
  const now = deps.clock.now();
  const expiresAt = new Date(now.getTime() + LINK_CODE_TTL_MS);
  for (let attempt = 0; ; attempt++) {
    const code = generateLinkCode();
    try {
      await deps.db
        .insertInto('link_codes')
        .values({
          code_hash: hashLinkCode(code),
          brand_id: input.brandId,
          identity_key: input.userIdentifier,
          created_at: now,
          expires_at: expiresAt,
        })
        .onConflict((oc) =>
          oc
            .column('identity_key')
            .where('used_at', 'is', null)
            .doUpdateSet((eb) => ({
              code_hash: eb.ref('excluded.code_hash'),
              brand_id: eb.ref('excluded.brand_id'),
              created_at: eb.ref('excluded.created_at'),
              expires_at: eb.ref('excluded.expires_at'),
            })),
        )
        .execute();
    } catch (error) {
      // Two live codes with the same hash (about 1 in 10^12 per pair): draw another.
      if (isUniqueViolation(error) && attempt < 3) continue;
      throw error;
    }
    return {
      success: true,
      code,
      expiresAt: expiresAt.toISOString(),
      accountKey: await resolveAccountKey(deps.db, input.userIdentifier),
    };
  }
}

function invalidCode(reason: 'unknown' | 'expired' | 'used', message: string): AppError {
  return new AppError('INVALID_LINK_CODE', message, { field: 'code', reason });
}

/**
 * `POST /services/link/confirm`: links the confirming identity to the account of the code's issuer. The code
 * is consumed by a conditional update (`used_at IS NULL AND expires_at > now`), so of two concurrent
 * confirmations exactly one succeeds; a refused link rolls back and then burns the code.
 */
export async function confirmLinkCode(deps: AccountDeps, input: ConfirmLinkCodeRequest): Promise<LinkResult> {
  const now = deps.clock.now();
  const codeHash = hashLinkCode(input.code);
  try {
    return await confirmLiveCode(deps, input, codeHash, now);
  } catch (error) {
    // A refused confirmation of a live code (confirmed by its issuer, from the issuer's platform, or by an
    // identity linked elsewhere) burns it: whoever else saw the code cannot try it next (issue 24 §6).
    if (error instanceof AppError && error.code !== 'INVALID_LINK_CODE') {
      await burnLinkCode(deps.db, { brandId: input.brandId, codeHash, at: now, by: `refused:${input.userIdentifier}` });
    }
    throw error;
  }
}

/**
 * `POST /services/link/revoke`: a bot saw the code where others could read it (typed in a group chat) and
 * voids it. Idempotent; `revoked` says whether a live code was voided.
 */
export async function revokeLinkCode(
  deps: Pick<AccountDeps, 'db' | 'clock'>,
  input: RevokeLinkCodeRequest,
): Promise<{ success: true; revoked: boolean }> {
  const revoked = await burnLinkCode(deps.db, {
    brandId: input.brandId,
    codeHash: hashLinkCode(input.code),
    at: deps.clock.now(),
    by: 'revoked',
  });
  return { success: true, revoked };
}

/** Marks a live code used (`used_by` says why), so it can never link; false when it was not live. */
async function burnLinkCode(
  db: Kysely<DB>,
  code: { brandId: string; codeHash: string; at: Date; by: string },
): Promise<boolean> {
  const burned = await db
    .updateTable('link_codes')
    .set({ used_at: code.at, used_by: code.by })
    .where('code_hash', '=', code.codeHash)
    .where('brand_id', '=', code.brandId)
    .where('used_at', 'is', null)
    .executeTakeFirst();
  return Number(burned.numUpdatedRows) === 1;
}

async function confirmLiveCode(
  deps: AccountDeps,
  input: ConfirmLinkCodeRequest,
  codeHash: string,
  now: Date,
): Promise<LinkResult> {
  const outcome = await deps.db.transaction().execute(async (trx) => {
    await lockLinks(trx);
    const row = await trx
      .selectFrom('link_codes')
      .select(['identity_key', 'expires_at', 'used_at'])
      .where('code_hash', '=', codeHash)
      .where('brand_id', '=', input.brandId)
      .executeTakeFirst();
    if (!row) throw invalidCode('unknown', 'Unknown link code: ask the bot for a new one with /link');
    if (row.used_at) throw invalidCode('used', 'This link code was already used: ask the bot for a new one');
    if (row.expires_at.getTime() <= now.getTime()) {
      throw invalidCode('expired', 'This link code expired (codes work 10 minutes): ask the bot for a new one');
    }
    if (row.identity_key === input.userIdentifier) {
      throw new AppError(
        'VALIDATION_ERROR',
        'A link code links two different identities: confirm it from the other platform, not the one that issued it',
        { field: 'code', reason: 'self_link' },
      );
    }
    // A code joins one person's accounts on two platforms. Confirmed on the platform that issued it, it would
    // let whoever saw it there (a code posted in a group chat) join the issuer's account: refused, and the
    // code stays usable from another platform.
    const issuedOn = identityPlatform(row.identity_key);
    if (issuedOn === identityPlatform(input.userIdentifier)) {
      throw new AppError(
        'VALIDATION_ERROR',
        `This code was issued on ${issuedOn}: confirm it from another platform (a ${issuedOn} account cannot join another ${issuedOn} account)`,
        { field: 'code', reason: 'same_platform', platform: issuedOn },
      );
    }
    const consumed = await trx
      .updateTable('link_codes')
      .set({ used_at: now, used_by: input.userIdentifier })
      .where('code_hash', '=', codeHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    if (Number(consumed.numUpdatedRows) !== 1) {
      throw invalidCode('used', 'This link code was already used: ask the bot for a new one');
    }
    const accountKey = await resolveAccountKey(trx, row.identity_key);
    return linkIdentity(deps, trx, {
      identity: input.userIdentifier,
      accountKey,
      method: 'code',
      brandId: input.brandId,
      at: now,
    });
  });
  return finishLink(deps, input.userIdentifier, outcome);
}

/**
 * `POST /services/link/email`: the plugin proved the user owns `email` (the brand vouches with its
 * signature); links the identity to the email's account.
 */
export async function linkEmail(deps: AccountDeps, input: LinkEmailRequest): Promise<LinkResult> {
  if (input.email === input.userIdentifier) {
    throw new AppError('VALIDATION_ERROR', 'userIdentifier is this email already: send the platform identity to link', {
      field: 'email',
      reason: 'self_link',
    });
  }
  const now = deps.clock.now();
  const outcome = await deps.db.transaction().execute(async (trx) => {
    await lockLinks(trx);
    const accountKey = await resolveAccountKey(trx, input.email);
    return linkIdentity(deps, trx, {
      identity: input.userIdentifier,
      accountKey,
      method: 'email',
      brandId: input.brandId,
      at: now,
    });
  });
  return finishLink(deps, input.userIdentifier, outcome);
}

/**
 * `POST /services/link/unlink`: takes an identity out of its account. The identity becomes an account of its
 * own again, with its own wallet (the one derived for it, so a wallet it had before linking comes back);
 * the account keeps its wallet, balance, streak and history. The account's primary identity holds the
 * wallet and cannot leave: the other identities leave it instead.
 */
export async function unlinkIdentity(deps: AccountDeps, input: UnlinkIdentityRequest): Promise<UnlinkResult> {
  const target = input.identityKey ?? input.userIdentifier;
  const accountKey = await deps.db.transaction().execute(async (trx) => {
    await lockLinks(trx);
    const accountKey = await resolveAccountKey(trx, input.userIdentifier);
    const targetAccount = await resolveAccountKey(trx, target);
    if (targetAccount !== accountKey) {
      throw new AppError('NOT_FOUND', `${target} is not linked to the account of ${input.userIdentifier}`, {
        field: 'identityKey',
        reason: 'not_in_account',
      });
    }
    if (target === accountKey) {
      const members = await trx
        .selectFrom('account_links')
        .select('identity_key')
        .where('account_key', '=', accountKey)
        .orderBy('identity_key')
        .execute();
      if (members.length === 0) {
        throw new AppError('CONFLICT', `${target} is not linked to any other identity: there is nothing to unlink`, {
          field: 'identityKey',
          reason: 'not_linked',
        });
      }
      throw new AppError(
        'CONFLICT',
        `${target} is the account's primary identity (it holds the wallet and balance) and cannot leave it; ` +
          `unlink the other identities instead: ${members.map((m) => m.identity_key).join(', ')}`,
        { field: 'identityKey', reason: 'primary_identity', linked: members.map((m) => m.identity_key) },
      );
    }
    await trx.deleteFrom('account_links').where('identity_key', '=', target).execute();
    // The identity's row pointed at the account's wallet: cleared here, given its own wallet below (outside
    // the transaction, since a wallet provider may call out); rewards in between wait for it as for a new user.
    await trx
      .updateTable('users')
      .set({ wallet_address: null, idp_user_id: null })
      .where('email', '=', target)
      .execute();
    return accountKey;
  });
  const wallet = await ensureAccountWallet(deps, deps.db, target);
  const { identities } = await accountIdentities(deps.db, accountKey);
  deps.logger.info({ accountKey, unlinked: target }, 'identity unlinked from its account');
  return { success: true, accountKey, unlinked: target, walletAddress: wallet.address, identities };
}

async function lockLinks(trx: Kysely<DB>): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${LINK_LOCK_KEY}::bigint)`.execute(trx);
}

interface LinkOutcome {
  accountKey: string;
  alreadyLinked: boolean;
  walletAddress: string;
  previousWalletAddress: string | null;
}

/**
 * Links `identity` (with every identity already linked to it, if it was an account) to `accountKey`, a root
 * account, and gives their users rows the account's wallet. Runs under the link lock.
 */
async function linkIdentity(
  deps: AccountDeps,
  trx: Kysely<DB>,
  link: { identity: string; accountKey: string; method: AccountLinkMethod; brandId: string; at: Date },
): Promise<LinkOutcome> {
  const { identity: identityKey, accountKey } = link;
  const current = await trx
    .selectFrom('account_links')
    .select('account_key')
    .where('identity_key', '=', identityKey)
    .executeTakeFirst();
  const currentAccount = current?.account_key ?? identityKey;
  const wallet = await ensureAccountWallet(deps, trx, accountKey);
  if (currentAccount === accountKey) {
    return { accountKey, alreadyLinked: true, walletAddress: wallet.address, previousWalletAddress: null };
  }
  if (current) {
    throw new AppError(
      'CONFLICT',
      `${identityKey} is already linked to another account; it can belong to one account only`,
      { field: 'userIdentifier', reason: 'linked_elsewhere', accountKey: current.account_key },
    );
  }
  // The identity is a root: it and the identities linked to it join the account (flattened, no chains).
  const moved = await trx
    .updateTable('account_links')
    .set({ account_key: accountKey })
    .where('account_key', '=', identityKey)
    .returning('identity_key')
    .execute();
  await trx
    .insertInto('account_links')
    .values({
      identity_key: identityKey,
      account_key: accountKey,
      method: link.method,
      brand_id: link.brandId,
      linked_at: link.at,
    })
    .execute();
  const members = [identityKey, ...moved.map((row) => row.identity_key)];
  const before = await ensureUsers(trx, [identityKey]);
  await trx
    .updateTable('users')
    .set({ wallet_address: wallet.address, idp_user_id: wallet.idpUserId })
    .where('email', 'in', members)
    .execute();
  const previous = before.get(identityKey)?.walletAddress ?? null;
  return {
    accountKey,
    alreadyLinked: false,
    walletAddress: wallet.address,
    previousWalletAddress: previous && previous.toLowerCase() !== wallet.address.toLowerCase() ? previous : null,
  };
}

/** The account's users row and wallet, created as the event path creates them when absent. */
async function ensureAccountWallet(
  deps: AccountDeps,
  trx: Kysely<DB>,
  accountKey: string,
): Promise<{ address: string; idpUserId: string | null }> {
  const user = (await ensureUsers(trx, [accountKey])).get(accountKey);
  if (!user) throw new Error(`user ${accountKey} was not created`);
  if (!user.walletAddress) {
    const wallet = await deps.wallets.walletForUser({ userId: user.id, email: accountKey });
    await setUserWallets(trx, [{ userId: user.id, address: wallet.address, idpUserId: wallet.idpUserId }]);
  }
  const row = await trx
    .selectFrom('users')
    .select(['wallet_address', 'idp_user_id'])
    .where('id', '=', user.id)
    .executeTakeFirstOrThrow();
  if (!row.wallet_address) throw new Error(`user ${accountKey} has no wallet after creating it`);
  return { address: row.wallet_address, idpUserId: row.idp_user_id };
}

async function finishLink(deps: AccountDeps, identityKey: string, outcome: LinkOutcome): Promise<LinkResult> {
  let previousWalletBalance: number | null = null;
  if (outcome.previousWalletAddress && deps.balanceOf) {
    try {
      previousWalletBalance = Number(await deps.balanceOf(outcome.previousWalletAddress as `0x${string}`));
    } catch (error) {
      deps.logger.warn({ err: error }, 'could not read the balance of the wallet a linked identity left');
    }
  }
  const { identities } = await accountIdentities(deps.db, outcome.accountKey);
  return {
    success: true,
    accountKey: outcome.accountKey,
    userIdentifier: identityKey,
    alreadyLinked: outcome.alreadyLinked,
    walletAddress: outcome.walletAddress,
    previousWalletAddress: outcome.previousWalletAddress,
    previousWalletBalance,
    identities,
  };
}

/** `GET /services/link/:brandId/:userIdentifier`: the identity's account, its wallet and all its identities. */
export async function describeAccount(db: Database, identityKey: string) {
  const { accountKey, identities } = await accountIdentities(db, identityKey);
  const user = await db.selectFrom('users').select('wallet_address').where('email', '=', accountKey).executeTakeFirst();
  return {
    success: true as const,
    userIdentifier: identityKey,
    accountKey,
    walletAddress: user?.wallet_address ?? null,
    identities,
  };
}

/** The platform of an identity key (`discord`, `telegram`, `x`, …), or `email` for a plain email. */
function identityPlatform(identityKey: string): string {
  return parsePlatformIdentity(identityKey)?.platform ?? 'email';
}

/** Account linking (docs/identity-linking.md), for the `/services/link` routes. */
export interface AccountService {
  issueLinkCode(input: IssueLinkCodeRequest): Promise<IssueLinkCodeResponse>;
  confirmLinkCode(input: ConfirmLinkCodeRequest): Promise<LinkResult>;
  revokeLinkCode(input: RevokeLinkCodeRequest): Promise<{ success: true; revoked: boolean }>;
  linkEmail(input: LinkEmailRequest): Promise<LinkResult>;
  unlinkIdentity(input: UnlinkIdentityRequest): Promise<UnlinkResult>;
  /** The identity's account, its wallet and all its identities. */
  describe(identityKey: string): ReturnType<typeof describeAccount>;
}

export function createAccountService(deps: AccountDeps): AccountService {
  return {
    issueLinkCode: (input) => issueLinkCode(deps, input),
    confirmLinkCode: (input) => confirmLinkCode(deps, input),
    revokeLinkCode: (input) => revokeLinkCode(deps, input),
    linkEmail: (input) => linkEmail(deps, input),
    unlinkIdentity: (input) => unlinkIdentity(deps, input),
    describe: (identityKey) => describeAccount(deps.db, identityKey),
  };
}
