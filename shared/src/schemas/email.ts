// What an e-mail address is, for every reader of one (issue 33 §3): core-api's schemas (sign-in, reset,
// invites, events, redemptions, pregeneration), the CLI, the portal and the browser SDK. No zod here, so
// the SDK's bundle takes the rule without the library.
//
// The local part is the common dot-atom subset (letters, digits, `_ ' + - .`; no leading, trailing or double
// dot). The domain is one or more hostname labels: a single label such as `localhost` is an address
// (RFC 5322 allows it, and `npm start` invites `demo@localhost`); a top-level domain is not required.

/** The longest address accepted (RFC 5321's path limit less the angle brackets). */
export const EMAIL_MAX_LENGTH = 254;

/** One e-mail address, whole string. Case-insensitive. */
export const EMAIL_PATTERN =
  /^(?!\.)(?!.*\.\.)[A-Za-z0-9_'+\-.]*[A-Za-z0-9_+-]@(?!-)[A-Za-z0-9-]{1,63}(?<!-)(?:\.(?!-)[A-Za-z0-9-]{1,63}(?<!-))*$/;

/** What a refusal says, so every reader words it the same way. */
export const EMAIL_RULE_MESSAGE = 'must be an e-mail address such as name@example.com (at most 254 characters)';

/** Whether `value` (already trimmed) is an e-mail address by the one rule. */
export function isEmailAddress(value: string): boolean {
  return value.length <= EMAIL_MAX_LENGTH && EMAIL_PATTERN.test(value);
}
