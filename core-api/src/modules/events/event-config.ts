import { DETECTION_METHODS, type EventConfigItem, rateFieldsOf } from '@pts/shared';
import type { RuleRecord } from './events.repository.ts';

type DetectionMethod = (typeof DETECTION_METHODS)[number];

/** A stored rule as the public event-config item (spec 2.3). */
export function toEventConfigItem(rule: RuleRecord): EventConfigItem {
  const method = (DETECTION_METHODS as readonly string[]).includes(rule.detection_method)
    ? (rule.detection_method as DetectionMethod)
    : 'manual';
  return {
    eventId: rule.id,
    eventType: rule.event_type,
    rewardAmount: Number(rule.reward_amount),
    ...rateFieldsOf(rule.rate),
    maxClaims: rule.max_claims_per_user,
    cooldownHours: rule.cooldown_hours,
    detectionMethod: method,
    detectionConfig: rule.detection_config,
    isCustom: rule.is_custom,
  };
}
