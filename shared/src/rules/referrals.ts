// Referrals (issue 36 §2, docs/referrals.md): the pure rules the referral service and every surface share —
// the code format, and the mailbox an address delivers to (the self-referral check compares mailboxes).

/** A referral code: 8 characters of Crockford's base32 (no I, L, O, U), so it survives being read aloud. */
export const REFERRAL_CODE_LENGTH = 8;
export const REFERRAL_CODE_ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
export const REFERRAL_CODE_PATTERN = /^[0-9A-HJKMNP-TV-Z]{8}$/;

/** Turns `bytes` (at least 8 random bytes) into a code: each byte picks one character (32 divides 256: no bias). */
export function referralCodeFromBytes(bytes: Uint8Array): string {
  if (bytes.length < REFERRAL_CODE_LENGTH) throw new RangeError(`need ${REFERRAL_CODE_LENGTH} random bytes`);
  let code = '';
  for (let i = 0; i < REFERRAL_CODE_LENGTH; i++) code += REFERRAL_CODE_ALPHABET[(bytes[i] as number) % 32];
  return code;
}

/**
 * A code as a person typed it, in its one stored form: trimmed, upper case, and the letters Crockford's
 * base32 reads as digits (O → 0, I and L → 1); hyphens and spaces ignored. Undefined when it is not a code.
 */
export function normalizeReferralCode(input: string): string | undefined {
  const code = input.trim().toUpperCase().replace(/[\s-]/g, '').replace(/O/g, '0').replace(/[IL]/g, '1');
  return REFERRAL_CODE_PATTERN.test(code) ? code : undefined;
}

/** The link a member shares: the brand's site with `?ref=<code>` (the SDK reads it and sends it with the sign-up). */
export function referralLink(websiteDomain: string, code: string): string {
  return `https://${websiteDomain}/?ref=${encodeURIComponent(code)}`;
}

/**
 * Providers that deliver `a.b.c@` to `abc@` (dots ignored) as well as dropping `+tags`. Gmail is the one
 * large provider known to ignore dots; googlemail.com is the same mailbox as gmail.com.
 */
export const DOT_BLIND_DOMAINS: readonly string[] = ['gmail.com', 'googlemail.com'];

/** Domains that are one provider's aliases of each other: compared as the first name. */
export const MAILBOX_DOMAIN_ALIASES: Readonly<Record<string, string>> = { 'googlemail.com': 'gmail.com' };

/**
 * Providers whose sub-addressing uses `-` instead of `+` (Yahoo's disposable addresses use `-`), listed so
 * that `name-tag@` is `name@` there; everywhere else `-` is part of the name.
 */
export const HYPHEN_TAG_DOMAINS: readonly string[] = ['yahoo.com', 'ymail.com', 'rocketmail.com'];

/**
 * The mailbox an address delivers to, for comparing two addresses: lower case; `+tag` dropped everywhere
 * (Gmail, Outlook/Hotmail, iCloud, Fastmail, Proton and most hosts deliver `name+tag@` to `name@`);
 * `-tag` dropped at the HYPHEN_TAG_DOMAINS; dots dropped at the DOT_BLIND_DOMAINS; domain aliases merged.
 * Not an address to send to: only to tell whether two addresses are one inbox.
 */
export function normalizeMailbox(address: string): string {
  const at = address.lastIndexOf('@');
  if (at < 1) return address.trim().toLowerCase();
  let local = address.slice(0, at).trim().toLowerCase();
  let domain = address
    .slice(at + 1)
    .trim()
    .toLowerCase()
    .replace(/\.$/, '');
  domain = MAILBOX_DOMAIN_ALIASES[domain] ?? domain;
  const plus = local.indexOf('+');
  if (plus > 0) local = local.slice(0, plus);
  if (HYPHEN_TAG_DOMAINS.includes(domain)) {
    const hyphen = local.indexOf('-');
    if (hyphen > 0) local = local.slice(0, hyphen);
  }
  if (DOT_BLIND_DOMAINS.includes(domain)) local = local.replace(/\./g, '');
  return `${local}@${domain}`;
}

/** Why a referral was refused, in the order the service checks them (docs/referrals.md, "Fraud rules"). */
export const REFERRAL_REFUSAL_REASONS = [
  'unknown_code',
  'self_referral_account',
  'self_referral_linked_identity',
  'self_referral_wallet',
  'self_referral_mailbox',
  'referee_not_new',
  'already_referred',
  'referrer_cap',
] as const;
export type ReferralRefusalReason = (typeof REFERRAL_REFUSAL_REASONS)[number];

/** What the self-referral check knows about each side. */
export interface ReferralParty {
  identityKey: string;
  accountKey: string;
  /** Every identity linked to the account (the account's own key included). */
  identityKeys: readonly string[];
  /** Wallets known for the party (lower case). */
  wallets: readonly string[];
}

/** The self-referral rule: the first way referee and referrer are one person, or undefined when none. */
export function selfReferralReason(referrer: ReferralParty, referee: ReferralParty): ReferralRefusalReason | undefined {
  if (referrer.identityKey === referee.identityKey) return 'self_referral_account';
  if (referrer.accountKey === referee.accountKey) return 'self_referral_linked_identity';
  const refereeWallets = new Set(referee.wallets.map((w) => w.toLowerCase()));
  if (referrer.wallets.some((w) => refereeWallets.has(w.toLowerCase()))) return 'self_referral_wallet';
  const mailboxes = new Set(referee.identityKeys.map(normalizeMailbox));
  if (referrer.identityKeys.some((key) => mailboxes.has(normalizeMailbox(key)))) return 'self_referral_mailbox';
  return undefined;
}

/** Whether a referral cap allows one more payment: `paidInPeriod` referrals paid in the cap's window. */
export function referralCapAllows(cap: number | null, paidInPeriod: number): boolean {
  return cap === null || paidInPeriod < cap;
}
