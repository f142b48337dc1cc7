import { type IdentityVerification, isOAuthUserIdFormat, type OAuthProvider } from '@pts/shared';
import { sql } from 'kysely';
import type { Database } from '../../db/database.ts';
import { ensureUsers, setUserWallets } from '../users/users.repository.ts';
import type { IdentityWalletProvider, WalletProvider } from '../wallets/wallet-provider.ts';

/**
 * Port: checks that a social-login identity is a real account (spec 4.8 rule 1). `verified`: the provider
 * confirmed it; `format_only`: only the id's format was checked; `rejected`: not an acceptable account.
 */
export interface IdentityVerifier {
  readonly kind: string;
  verify(
    provider: OAuthProvider,
    userId: string,
  ): Promise<IdentityVerification | VerificationOutcome> | IdentityVerification | VerificationOutcome;
}

/** A verifier's answer with its reason, which the response shows (`message`, or the 400's `error`). */
export interface VerificationOutcome {
  verification: IdentityVerification;
  /** Why, as a clause: "Discord has no user with this ID", "Discord could not be reached (HTTP 503)". */
  reason?: string | undefined;
}

/** A verifier's answer as an outcome (verifiers may answer the bare verification). */
export function toVerificationOutcome(answer: IdentityVerification | VerificationOutcome): VerificationOutcome {
  return typeof answer === 'string' ? { verification: answer } : answer;
}

/**
 * Default verifier: no provider is called, so an id is never `verified`. It refuses obvious placeholder ids
 * (one digit or letter repeated, such as `00000000000000000`) and otherwise answers `format_only`; the
 * route has already checked the per-provider format.
 */
export function createFormatOnlyVerifier(): IdentityVerifier {
  return {
    kind: 'format-only',
    verify(provider, userId) {
      if (!isOAuthUserIdFormat(provider, userId)) return 'rejected';
      if (userId.length > 1 && /^(.)\1+$/.test(userId)) return 'rejected';
      return 'format_only';
    },
  };
}

export interface PregenerationDeps {
  db: Database;
  wallets: WalletProvider & IdentityWalletProvider;
}

/** What one answered pregeneration records in the audit log (spec 4.8 rule 4). */
export interface PregenerationAuditEntry {
  brandId: string;
  provider: string;
  userId: string;
  wallet: string;
  createdNew: boolean;
  verification: IdentityVerification | 'email';
  metadata: Record<string, unknown> | undefined;
}

/** Wallet pregeneration (spec 4.8; docs/pregeneration.md) for `POST /pts-api/pregenerate-user`. */
export interface PregenerationService {
  /** Whether a brand with this (lowercase) id is registered. */
  brandExists(brandId: string): Promise<boolean>;
  /** Finds or creates the wallet of one social-login identity. */
  pregenerateIdentity(input: {
    brandId: string;
    provider: OAuthProvider;
    subject: string;
    username?: string | undefined;
  }): Promise<PregeneratedWallet>;
  /** Finds or creates the wallet of the user with this email (the event path's wallet). */
  pregenerateEmailUser(email: string): Promise<PregeneratedWallet>;
  /** One audit row per answered pregeneration (new or fetched). */
  audit(entry: PregenerationAuditEntry): Promise<void>;
}

export function createPregenerationService(deps: PregenerationDeps): PregenerationService {
  return {
    brandExists: (brandId) => brandExists(deps.db, brandId),
    pregenerateIdentity: (input) => pregenerateIdentity(deps, input),
    pregenerateEmailUser: (email) => pregenerateEmailUser(deps, email),
    audit: (entry) => auditPregeneration(deps.db, entry),
  };
}

export interface PregeneratedWallet {
  walletAddress: string;
  idpUserId: string;
  createdNew: boolean;
}

/**
 * Finds or creates the wallet of one identity. The id comes from the sequence first so the wallet can be
 * derived (CPU work) before anything is written; then one `INSERT … ON CONFLICT DO NOTHING RETURNING`
 * decides the winner among concurrent callers, and a loser reads the winner's row (the insert waits for
 * the winner's commit, so the select sees it). A loser's sequence value is simply unused. A conflict on
 * the wallet alone (another identity already holds it) reads nothing and is reported as such.
 */
export async function pregenerateIdentity(
  deps: PregenerationDeps,
  input: { brandId: string; provider: OAuthProvider; subject: string; username?: string | undefined },
): Promise<PregeneratedWallet> {
  const existing = await findIdentity(deps.db, input.provider, input.subject);
  if (existing) {
    if (input.username !== undefined && input.username !== existing.username) {
      await deps.db
        .updateTable('oauth_identities')
        .set({ username: input.username })
        .where('id', '=', existing.id)
        .execute();
    }
    return { walletAddress: existing.wallet_address, idpUserId: existing.idp_user_id, createdNew: false };
  }
  const { rows } = await sql<{ id: bigint }>`SELECT nextval('oauth_identities_id_seq') AS id`.execute(deps.db);
  const id = BigInt(rows[0]!.id);
  const wallet = await deps.wallets.walletForIdentity({
    identityId: id,
    provider: input.provider,
    subject: input.subject,
    username: input.username,
  });
  const inserted = await deps.db
    .insertInto('oauth_identities')
    .values({
      id,
      provider: input.provider,
      subject: input.subject,
      username: input.username ?? null,
      wallet_address: wallet.address.toLowerCase(),
      idp_user_id: wallet.idpUserId,
    })
    // No conflict target: concurrent callers for one identity get the same wallet from the identity provider
    // (Privy dedupes by linked account), so a loser's row collides on wallet_address as well as on
    // (provider, subject) — and PostgreSQL raises the first index it checks unless every conflict is ignored.
    .onConflict((oc) => oc.doNothing())
    .returning(['wallet_address', 'idp_user_id'])
    .executeTakeFirst();
  if (inserted) return { walletAddress: inserted.wallet_address, idpUserId: inserted.idp_user_id, createdNew: true };
  const winner = await findIdentity(deps.db, input.provider, input.subject);
  if (!winner) throw new Error(`identity ${input.provider}:${input.subject} conflicted but cannot be read`);
  return { walletAddress: winner.wallet_address, idpUserId: winner.idp_user_id, createdNew: false };
}

function findIdentity(db: Database, provider: string, subject: string) {
  return db
    .selectFrom('oauth_identities')
    .select(['id', 'username', 'wallet_address', 'idp_user_id'])
    .where('provider', '=', provider)
    .where('subject', '=', subject)
    .executeTakeFirst();
}

/**
 * The email form: the user's email wallet, exactly as the event path creates it (users row, wallet derived
 * from the user id). `createdNew` is true only for the call whose update set the wallet.
 */
export async function pregenerateEmailUser(deps: PregenerationDeps, email: string): Promise<PregeneratedWallet> {
  const user = (await ensureUsers(deps.db, [email])).get(email);
  if (!user) throw new Error(`user ${email} was not created`);
  if (user.walletAddress) {
    const row = await deps.db
      .selectFrom('users')
      .select(['wallet_address', 'idp_user_id'])
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    return { walletAddress: row.wallet_address!, idpUserId: row.idp_user_id ?? '', createdNew: false };
  }
  const wallet = await deps.wallets.walletForUser({ userId: user.id, email });
  const created = await setUserWallets(deps.db, [
    { userId: user.id, address: wallet.address, idpUserId: wallet.idpUserId },
  ]);
  return { walletAddress: wallet.address, idpUserId: wallet.idpUserId, createdNew: created.has(user.id) };
}

/** Spec 4.8 rule 4: one audit row per answered pregeneration (new or fetched). */
export async function auditPregeneration(db: Database, entry: PregenerationAuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      actor: 'pregenerate',
      action: 'pregenerate_user',
      subject: entry.brandId,
      brand_id: entry.brandId,
      details: JSON.stringify({
        provider: entry.provider,
        oauth_user_id: entry.userId,
        wallet: entry.wallet,
        created_new: entry.createdNew,
        verification: entry.verification,
        metadata: entry.metadata ?? {},
      }),
    })
    .execute();
}

export async function brandExists(db: Database, brandId: string): Promise<boolean> {
  const row = await db.selectFrom('brands').select('address').where('address', '=', brandId).executeTakeFirst();
  return row !== undefined;
}
