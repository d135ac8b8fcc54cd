import { isbot } from 'isbot';
import { type Address, APPLE_PROXY_AGENT, fromAppleNetwork, fromScannerNetwork, GOOGLE_IMAGE_PROXY_AGENT, parseAddress, SCANNER_AGENT } from './known-fetchers';

/**
 * Who is behind an open or a click (decisions.md, "Engagement classification"). Only `human` counts as
 * engagement. The rules are tried in order and the first that applies decides; its name is kept with the
 * event as `reason`, so every decision can be explained.
 */
export type Classification = 'human' | 'machine' | 'prefetch' | 'bot';

export interface Hit {
  kind: 'open' | 'click';
  method: string;
  userAgent: string;
  /** The client's address as the API sees it (TRUST_PROXY decides whether X-Forwarded-For counts). */
  ip: string;
  /** Epoch milliseconds. */
  at: number;
  /** A click on the hidden honeypot link. */
  honeypot: boolean;
}

export interface HitContext {
  /** When the provider accepted the message (epoch ms); null when a click came before that was recorded. */
  sentAt: number | null;
  /** Other links of the same message clicked within BURST_WINDOW_MS of this click. */
  otherLinksNearby: number;
}

export interface Verdict {
  classification: Classification;
  reason: string;
}

/** A scanner opens links as the message arrives; a person has not read it yet. */
export const DELIVERY_GRACE_MS = 10_000;
/** Nobody clicks two different links of an email within a second. */
export const BURST_WINDOW_MS = 1_000;

/** What the rules read: the hit, its context, and the client's address parsed once. */
type Judged = HitContext & { address: () => Address };

interface Rule {
  reason: string;
  applies: (hit: Hit, context: Judged) => boolean;
  classification: Classification | ((hit: Hit) => Classification);
}

/**
 * isbot's verdict per agent, remembered: its pattern is long, and the agents of a day's hits are few. A
 * bounded map, emptied when full, so a flood of made-up agents costs memory for a moment only.
 */
const KNOWN_AGENTS = new Map<string, boolean>();
function automatedAgent(userAgent: string): boolean {
  let verdict = KNOWN_AGENTS.get(userAgent);
  if (verdict === undefined) {
    verdict = userAgent.trim() === '' || isbot(userAgent);
    if (KNOWN_AGENTS.size >= 10_000) KNOWN_AGENTS.clear();
    KNOWN_AGENTS.set(userAgent, verdict);
  }
  return verdict;
}

const RULES: Rule[] = [
  // Link checkers ask for headers only; a browser never does.
  { reason: 'head-request', applies: (hit) => hit.method === 'HEAD', classification: 'bot' },
  { reason: 'honeypot-link', applies: (hit) => hit.kind === 'click' && hit.honeypot, classification: 'bot' },
  // Before the agent rules: isbot counts this proxy as a bot, but it fetches when the person opens.
  { reason: 'google-image-proxy', applies: (hit) => hit.kind === 'open' && GOOGLE_IMAGE_PROXY_AGENT.test(hit.userAgent), classification: 'human' },
  { reason: 'apple-privacy-proxy-network', applies: (hit, context) => hit.kind === 'open' && fromAppleNetwork(context.address()), classification: 'prefetch' },
  { reason: 'apple-privacy-proxy-agent', applies: (hit) => hit.kind === 'open' && hit.userAgent.trim() === APPLE_PROXY_AGENT, classification: 'prefetch' },
  { reason: 'scanner-network', applies: (_hit, context) => fromScannerNetwork(context.address()), classification: 'bot' },
  { reason: 'scanner-user-agent', applies: (hit) => SCANNER_AGENT.test(hit.userAgent), classification: 'bot' },
  // An automated agent fetching the pixel is a cache or archiver (machine); following a link, a checker (bot).
  {
    reason: 'automated-user-agent',
    applies: (hit) => automatedAgent(hit.userAgent),
    classification: (hit) => (hit.kind === 'open' ? 'machine' : 'bot'),
  },
  {
    reason: 'click-at-delivery',
    applies: (hit, context) => hit.kind === 'click' && (context.sentAt === null || hit.at - context.sentAt < DELIVERY_GRACE_MS),
    classification: 'bot',
  },
  { reason: 'link-burst', applies: (hit, context) => hit.kind === 'click' && context.otherLinksNearby > 0, classification: 'bot' },
];

export function classifyHit(hit: Hit, context: HitContext): Verdict {
  let parsed: Address | undefined;
  const judged: Judged = { ...context, address: () => (parsed === undefined ? (parsed = parseAddress(hit.ip)) : parsed) };
  for (const rule of RULES) {
    if (rule.applies(hit, judged)) {
      return { classification: typeof rule.classification === 'function' ? rule.classification(hit) : rule.classification, reason: rule.reason };
    }
  }
  return { classification: 'human', reason: 'no-automation-sign' };
}

/** How many other links of the message were clicked within the burst window of this click. */
export function otherLinksNear(clicks: ReadonlyArray<{ position: number; at: number }>, click: { position: number; at: number }): number {
  const others = new Set<number>();
  for (const other of clicks) {
    if (other.position !== click.position && Math.abs(other.at - click.at) <= BURST_WINDOW_MS) others.add(other.position);
  }
  return others.size;
}
