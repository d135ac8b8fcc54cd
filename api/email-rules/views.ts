import type { EmailRuleRecord } from '../../db/repositories/email-rules';
import type { EmailRuleView } from './schemas';

export function emailRuleView(rule: EmailRuleRecord): EmailRuleView {
  return { id: rule.id, action: rule.action, matchType: rule.matchType, value: rule.value, note: rule.note, createdAt: rule.createdAt.toISOString() };
}
