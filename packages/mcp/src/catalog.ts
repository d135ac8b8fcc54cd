import type { Grant } from './scopes';
import { allows } from './scopes';
import type { McpTool } from './tool';
import { getUsage, listDomains } from './tools/account';
import { estimateCampaign, listCampaigns, sendCampaign } from './tools/campaigns';
import { searchContacts } from './tools/contacts';
import { listInboxes, listInboxThreads, readThread, replyToThread } from './tools/inbox';
import { getMessage, sendEmail, sendMessage } from './tools/sending';

/** Every tool the server knows, in the order an agent reads them. */
export const TOOLS: readonly McpTool[] = [
  sendEmail,
  sendMessage,
  getMessage,
  searchContacts,
  listInboxes,
  listInboxThreads,
  readThread,
  replyToThread,
  listCampaigns,
  estimateCampaign,
  sendCampaign,
  listDomains,
  getUsage,
];

/** The tools a key with these grants may use: a tool it would only get 403 from is never offered. */
export function toolsFor(grants: readonly Grant[]): McpTool[] {
  return TOOLS.filter((tool) => allows(grants, tool.access));
}
