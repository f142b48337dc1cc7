import { type Clock, type ConstraintResult, parsePlatformIdentity } from '@pts/shared';
import type { Logger } from 'pino';
import { getAddress, isAddress } from 'viem';
import type { Config } from '../../../config.ts';
import type { Database } from '../../../db/database.ts';
import { guardedRequest, type HostResolver, SsrfError, type SsrfPolicy } from '../../../http/ssrf-guard.ts';
import { findPerk } from '../perks.repository.ts';
import { perkNotFound } from '../perks.service.ts';
import { type ChatPlatform, type ChatRoleSource, findChatRoles, saveChatRoles } from './chat-roles.ts';
import {
  type ConstraintRow,
  findCachedAnswer,
  listConstraintRows,
  saveCachedAnswer,
} from './constraints.repository.ts';

/** What the checker needs. `balanceOf` reads the live RewardToken balance. */
export interface ConstraintCheckerDeps {
  db: Database;
  clock: Clock;
  logger?: Logger | undefined;
  /** Live RewardToken balance; absent → `min_balance` constraints are not met (balance unknown). */
  balanceOf?: ((address: `0x${string}`) => Promise<bigint>) | undefined;
  /** Live member roles; absent → only reported snapshots younger than the refresh interval count. */
  chatRoles?: ChatRoleSource | undefined;
  settings: {
    /** How long a chat-role snapshot is trusted (PTS_CHAT_ROLE_REFRESH_SECONDS). */
    chatRoleRefreshSeconds: number;
    /** Deadline of one external API call (PTS_CONSTRAINT_TIMEOUT_MS). */
    timeoutMs: number;
    /** Plain http and loopback targets (PTS_CONSTRAINTS_ALLOW_INSECURE, or PTS_CHAIN=local). */
    allowInsecure: boolean;
  };
  /** DNS for the SSRF guard; the system resolver when absent (tests inject one). */
  resolve?: HostResolver | undefined;
}

/** Every constraint's verdict; `eligible` is true when all pass (and when the perk has none). */
export interface EligibilityResult {
  eligible: boolean;
  brandId: string;
  results: ConstraintResult[];
}

/** Evaluates a perk's constraints for a wallet; shared by the relayer and the eligibility endpoints. */
export interface ConstraintChecker {
  /** Throws PERK_NOT_FOUND for an unknown collection id. */
  check(input: { collectionId: bigint | number; userAddress: string }): Promise<EligibilityResult>;
}

interface ExternalAnswer {
  eligible: boolean;
  reason: string;
}

const MAX_API_REASON = 200;

/**
 * The constraint evaluator (docs/constraints.md):
 * - `external_api`: `GET <url>?user_address=<0x…>&collection_id=<id>` through the SSRF guard; a 2xx JSON
 *   `{ "eligible": boolean }` (optional `reason` string) is cached per constraint and user for the
 *   constraint's TTL. Failures (refused URL, timeout, non-2xx, bad JSON) are "not eligible" and never cached,
 *   so the next check asks again. Concurrent checks of one constraint and user share one call (single-flight).
 * - `min_balance`: live `RewardToken.balanceOf`, never cached.
 * - `chat_role`: the wallet's linked platform account (oauth_identities) must hold the role in the brand's
 *   roles snapshot; a snapshot older than the refresh interval is refreshed through the ChatRoleSource, and
 *   without one (or when it fails) the roles are unknown → not eligible.
 */
export function createConstraintChecker(deps: ConstraintCheckerDeps): ConstraintChecker {
  const inflight = new Map<string, Promise<ExternalAnswer>>();

  const askExternalApi = async (
    constraint: ConstraintRow,
    apiUrl: string,
    collectionId: bigint,
    userAddress: string,
  ): Promise<ExternalAnswer> => {
    const url = new URL(apiUrl);
    url.searchParams.set('user_address', userAddress);
    url.searchParams.set('collection_id', collectionId.toString());
    let answer: ExternalAnswer;
    try {
      const response = await guardedRequest({
        method: 'GET',
        url: url.toString(),
        headers: { accept: 'application/json', 'user-agent': 'pts-constraint-checker/1' },
        timeoutMs: deps.settings.timeoutMs,
        policy: { allowLoopback: deps.settings.allowInsecure, allowInsecure: deps.settings.allowInsecure },
        ...(deps.resolve ? { resolve: deps.resolve } : {}),
        maxBodyBytes: 8192,
      });
      if (response.statusCode < 200 || response.statusCode > 299) {
        return { eligible: false, reason: `constraint API answered HTTP ${response.statusCode}; try again later` };
      }
      const parsed = parseAnswer(response.body);
      if (!parsed) {
        return {
          eligible: false,
          reason: 'constraint API answer is not JSON with a boolean "eligible" field; try again later',
        };
      }
      answer = parsed;
    } catch (error) {
      if (error instanceof SsrfError) {
        return { eligible: false, reason: `constraint API URL refused: ${error.message}` };
      }
      deps.logger?.warn({ err: error, constraintId: constraint.id }, 'constraint API call failed');
      return {
        eligible: false,
        reason: `constraint API did not answer (${(error as Error).message}); try again later`,
      };
    }
    if (constraint.ttl_seconds > 0) {
      const now = deps.clock.now();
      await saveCachedAnswer(deps.db, {
        constraintId: constraint.id,
        userAddress,
        apiUrl,
        collectionId,
        eligible: answer.eligible,
        detail: answer.reason,
        expiresAt: new Date(now.getTime() + constraint.ttl_seconds * 1000),
        now,
      });
    }
    return answer;
  };

  const checkExternalApi = async (
    constraint: ConstraintRow,
    collectionId: bigint,
    userAddress: string,
  ): Promise<Omit<ConstraintResult, 'constraintId' | 'kind'>> => {
    const apiUrl = constraint.api_url ?? String(constraint.config.url);
    const cached = await findCachedAnswer(deps.db, constraint.id, userAddress, deps.clock.now());
    if (cached) return { eligible: cached.eligible, reason: cached.detail ?? '', cached: true };
    const key = `${constraint.id}:${userAddress}`;
    let pending = inflight.get(key);
    if (!pending) {
      pending = askExternalApi(constraint, apiUrl, collectionId, userAddress).finally(() => inflight.delete(key));
      inflight.set(key, pending);
    }
    const answer = await pending;
    return { ...answer, cached: false };
  };

  const checkMinBalance = async (
    constraint: ConstraintRow,
    userAddress: string,
  ): Promise<Omit<ConstraintResult, 'constraintId' | 'kind'>> => {
    const required = BigInt(String(constraint.config.amount));
    if (!deps.balanceOf) {
      return { eligible: false, reason: 'token balance unknown: the chain is not configured', cached: false };
    }
    let balance: bigint;
    try {
      balance = await deps.balanceOf(userAddress as `0x${string}`);
    } catch (error) {
      deps.logger?.warn({ err: error }, 'constraint balance read failed');
      return { eligible: false, reason: 'token balance unknown: the chain did not answer; try again', cached: false };
    }
    return balance >= required
      ? { eligible: true, reason: `balance ${balance} ≥ ${required} required`, cached: false }
      : { eligible: false, reason: `balance ${balance} is below the ${required} tokens required`, cached: false };
  };

  const checkChatRole = async (
    constraint: ConstraintRow,
    brandId: string,
    userAddress: string,
  ): Promise<Omit<ConstraintResult, 'constraintId' | 'kind'>> => {
    const platform = String(constraint.config.platform) as ChatPlatform;
    const guildId = String(constraint.config.guildId);
    const role = String(constraint.config.role);
    const members = await platformAccountsOfWallet(platform, userAddress);
    if (members.length === 0) {
      return { eligible: false, reason: `no ${platform} account is linked to wallet ${userAddress}`, cached: false };
    }
    // One wallet may carry several accounts of a platform (linked identities): any of them holding the role counts.
    let verdict: Omit<ConstraintResult, 'constraintId' | 'kind'> | undefined;
    for (const userId of members) {
      verdict = await memberHasRole({ brandId, platform, guildId, userId }, role);
      if (verdict.eligible) return verdict;
    }
    return verdict as Omit<ConstraintResult, 'constraintId' | 'kind'>;
  };

  /**
   * The platform user ids behind a wallet: its social login (`oauth_identities`, from pregeneration) and the
   * bots' synthetic identities (`discord_<id>@…`, `telegram_<id>@…`) whose users rows hold the wallet.
   */
  const platformAccountsOfWallet = async (platform: ChatPlatform, userAddress: string): Promise<string[]> => {
    const ids = new Set<string>();
    const social = await deps.db
      .selectFrom('oauth_identities')
      .select('subject')
      .where('provider', '=', platform)
      .where('wallet_address', '=', userAddress)
      .execute();
    for (const row of social) ids.add(row.subject);
    const addresses = isAddress(userAddress, { strict: false })
      ? [userAddress, getAddress(userAddress)]
      : [userAddress];
    const users = await deps.db.selectFrom('users').select('email').where('wallet_address', 'in', addresses).execute();
    for (const row of users) {
      const identity = parsePlatformIdentity(row.email);
      if (identity?.platform === platform) ids.add(identity.platformUserId);
    }
    return [...ids].sort();
  };

  const memberHasRole = async (
    key: { brandId: string; platform: ChatPlatform; guildId: string; userId: string },
    role: string,
  ): Promise<Omit<ConstraintResult, 'constraintId' | 'kind'>> => {
    const { platform, guildId } = key;
    const now = deps.clock.now();
    let snapshot = await findChatRoles(deps.db, key);
    let cached = true;
    const maxAgeMs = deps.settings.chatRoleRefreshSeconds * 1000;
    let refreshProblem = 'no chat role source is configured';
    if (!snapshot || now.getTime() - snapshot.refreshedAt.getTime() >= maxAgeMs) {
      if (deps.chatRoles) {
        try {
          const roles = await deps.chatRoles.fetchMemberRoles(key);
          snapshot = await saveChatRoles(deps, { ...key, roles });
          cached = false;
        } catch (error) {
          deps.logger?.warn({ err: error, platform, guildId }, 'chat role refresh failed');
          refreshProblem = `the ${platform} role lookup failed (${(error as Error).message})`;
        }
      }
      if (cached) {
        const age = snapshot
          ? `last reported ${Math.round((now.getTime() - snapshot.refreshedAt.getTime()) / 1000)} s ago, older than ${deps.settings.chatRoleRefreshSeconds} s`
          : 'never reported';
        return { eligible: false, reason: `${platform} roles unknown (${age}) and ${refreshProblem}`, cached: false };
      }
    }
    const roles = snapshot?.roles ?? [];
    return roles.includes(role)
      ? { eligible: true, reason: `${platform} member has role ${role} in ${guildId}`, cached }
      : { eligible: false, reason: `${platform} member lacks role ${role} in ${guildId}`, cached };
  };

  return {
    async check({ collectionId, userAddress }) {
      const id = BigInt(collectionId);
      const user = userAddress.toLowerCase();
      const perk = await findPerk(deps.db, id);
      if (!perk) throw perkNotFound(id);
      const constraints = await listConstraintRows(deps.db, id);
      const results = await Promise.all(
        constraints.map(async (constraint): Promise<ConstraintResult> => {
          const verdict =
            constraint.kind === 'external_api'
              ? await checkExternalApi(constraint, id, user)
              : constraint.kind === 'min_balance'
                ? await checkMinBalance(constraint, user)
                : await checkChatRole(constraint, perk.brand_id, user);
          return { constraintId: constraint.id, kind: constraint.kind, ...verdict };
        }),
      );
      return { eligible: results.every((result) => result.eligible), brandId: perk.brand_id, results };
    },
  };
}

function parseAnswer(body: string): ExternalAnswer | undefined {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch {
    return undefined;
  }
  if (typeof json !== 'object' || json === null) return undefined;
  const { eligible, reason } = json as { eligible?: unknown; reason?: unknown };
  if (typeof eligible !== 'boolean') return undefined;
  const text = typeof reason === 'string' && reason.trim() ? `: ${reason.trim().slice(0, MAX_API_REASON)}` : '';
  return { eligible, reason: `constraint API says ${eligible ? 'eligible' : 'not eligible'}${text}` };
}

/** The checker's settings from config: PTS_CONSTRAINT_*, PTS_CHAT_ROLE_REFRESH_SECONDS. */
export function constraintSettingsFrom(
  config: Pick<
    Config,
    'PTS_CHAT_ROLE_REFRESH_SECONDS' | 'PTS_CONSTRAINT_TIMEOUT_MS' | 'PTS_CONSTRAINTS_ALLOW_INSECURE' | 'PTS_CHAIN'
  >,
): ConstraintCheckerDeps['settings'] {
  return {
    chatRoleRefreshSeconds: config.PTS_CHAT_ROLE_REFRESH_SECONDS,
    timeoutMs: config.PTS_CONSTRAINT_TIMEOUT_MS,
    allowInsecure: config.PTS_CONSTRAINTS_ALLOW_INSECURE ?? config.PTS_CHAIN === 'local',
  };
}

/** What an `external_api` constraint URL may point at: public https, or also local http in local mode. */
export function constraintUrlPolicy(config: Parameters<typeof constraintSettingsFrom>[0]): SsrfPolicy {
  const { allowInsecure } = constraintSettingsFrom(config);
  return { allowLoopback: allowInsecure, allowInsecure };
}
