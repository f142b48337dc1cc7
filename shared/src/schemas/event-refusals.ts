// No zod here: the portal's pages import this module, and it stays out of their bundle's schema code.

/** What a refused event's code means, for the people who read a member's history. */
const EVENT_REFUSAL_TEXT: Record<string, string> = {
  COOLDOWN_ACTIVE: 'the rule’s cooldown had not passed since the member’s last claim',
  MAX_CLAIMS_REACHED: 'the member had reached the rule’s claims per member',
  MAX_TOTAL_CLAIMS_REACHED: 'the rule had reached its total claims',
  DUPLICATE_EVENT: 'a duplicate of an event seconds before (the duplicate window)',
  DUPLICATE_EXTERNAL_ID: 'its externalId was already rewarded',
  UNKNOWN_EVENT_TYPE: 'no active rule for this event type (unknown or paused)',
  AUTOMATION_DISABLED: 'automation was off for the brand',
  DOMAIN_NOT_AUTHORIZED: 'sent from a domain the brand has not authorized',
  CHANNEL_NOT_ALLOWED: 'sent from a channel the rule does not allow',
  INVALID_SIGNATURE: 'unsigned, while the brand accepts only signed events',
  VALIDATION_ERROR: 'the event was invalid (e.g. a campaign that was not running)',
  CLAIM_FAILED: 'a streak milestone that was not reached or already claimed',
  MEMBER_BLOCKED: 'the brand had blocked the member',
  RULE_ARCHIVED: 'the rule for this event type was archived',
};

/** The reason of a refused event in words (the code itself when it has none). */
export function eventRefusalText(code: string): string {
  return EVENT_REFUSAL_TEXT[code] ?? code;
}
