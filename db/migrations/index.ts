import * as foundation from './0001-foundation';
import * as domains from './0002-domains';
import * as templatesAttachments from './0003-templates-attachments';
import * as contacts from './0004-contacts';
import * as messages from './0005-messages';
import * as messageKeys from './0006-message-keys';
import * as suppressionLookup from './0007-suppression-lookup';
import * as parkedEventsDomainClaims from './0008-parked-events-domain-claims';
import * as deliveryFence from './0009-delivery-fence';
import * as fairDispatch from './0010-fair-dispatch';
import * as webhooks from './0011-webhooks';
import * as tracking from './0012-tracking';
import * as utmTouches from './0013-utm-touches';
import * as campaigns from './0014-campaigns';
import * as campaignTiming from './0015-campaign-timing';
import * as telegram from './0016-telegram';
import * as twilio from './0017-twilio';
import * as messageParts from './0018-message-parts';
import * as chatWebhookEvents from './0019-chat-webhook-events';
import * as automations from './0020-automations';
import * as inboxes from './0021-inboxes';
import * as inboundProcessing from './0022-inbound-processing';
import * as inboxOutbound from './0023-inbox-outbound';
import * as commerceAttribution from './0024-commerce-attribution';
import * as imports from './0025-imports';
import * as usageDaily from './0026-usage-daily';
import * as analyticsConnections from './0027-analytics-connections';
import * as inboundLimits from './0029-inbound-limits';
import * as journeySkips from './0031-journey-skips';
import * as suppressionDetail from './0033-suppression-detail';
import * as providerBreakers from './0034-provider-breakers';
import * as workerRegistry from './0035-worker-registry';
import * as campaignChannels from './0037-campaign-channels';
import * as transactionalRecipients from './0038-transactional-recipients';
import * as attachmentReplacements from './0041-attachment-replacements';
import * as messageTraceparent from './0042-message-traceparent';

/** Migrations in order. Listed by hand rather than globbed, so they run the same under tsx, jest and a bundle. */
export const migrations = [
  { name: '0001-foundation', ...foundation },
  { name: '0002-domains', ...domains },
  { name: '0003-templates-attachments', ...templatesAttachments },
  { name: '0004-contacts', ...contacts },
  { name: '0005-messages', ...messages },
  { name: '0006-message-keys', ...messageKeys },
  { name: '0007-suppression-lookup', ...suppressionLookup },
  { name: '0008-parked-events-domain-claims', ...parkedEventsDomainClaims },
  { name: '0009-delivery-fence', ...deliveryFence },
  { name: '0010-fair-dispatch', ...fairDispatch },
  { name: '0011-webhooks', ...webhooks },
  { name: '0012-tracking', ...tracking },
  { name: '0013-utm-touches', ...utmTouches },
  { name: '0014-campaigns', ...campaigns },
  { name: '0015-campaign-timing', ...campaignTiming },
  { name: '0016-telegram', ...telegram },
  { name: '0017-twilio', ...twilio },
  { name: '0018-message-parts', ...messageParts },
  { name: '0019-chat-webhook-events', ...chatWebhookEvents },
  { name: '0020-automations', ...automations },
  { name: '0021-inboxes', ...inboxes },
  { name: '0022-inbound-processing', ...inboundProcessing },
  { name: '0023-inbox-outbound', ...inboxOutbound },
  { name: '0024-commerce-attribution', ...commerceAttribution },
  { name: '0025-imports', ...imports },
  { name: '0026-usage-daily', ...usageDaily },
  { name: '0027-analytics-connections', ...analyticsConnections },
  { name: '0029-inbound-limits', ...inboundLimits },
  { name: '0031-journey-skips', ...journeySkips },
  { name: '0033-suppression-detail', ...suppressionDetail },
  { name: '0034-provider-breakers', ...providerBreakers },
  { name: '0035-worker-registry', ...workerRegistry },
  { name: '0037-campaign-channels', ...campaignChannels },
  { name: '0038-transactional-recipients', ...transactionalRecipients },
  { name: '0041-attachment-replacements', ...attachmentReplacements },
  { name: '0042-message-traceparent', ...messageTraceparent },
];
