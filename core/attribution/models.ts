import type { MessageKind } from '../dispatch';

/**
 * Attribution models over one contact's touches (a person's clicks on links of our messages, `utm_touches`).
 * The spec's model is `last_content_click`: the last click on a content link (never the logo, images, chrome
 * or social links; never an open; never a non-human click: touches are human clicks only) of a marketing
 * message (campaign or automation: decisions.md, transactional sends never earn an order) within the window
 * before the conversion. The others read the same touches, so they can be compared with it:
 * - `first_touch`: the first click of a marketing message in the window, content or not;
 * - `last_touch`: the last such click, content or not;
 * - `linear`: every such click in the window an equal share.
 * Pure: the repository reads the window's touches, these decide the credit.
 */
export const ATTRIBUTION_MODELS = ['last_content_click', 'first_touch', 'last_touch', 'linear'] as const;
export type AttributionModel = (typeof ATTRIBUTION_MODELS)[number];

export interface Touch {
  id: string;
  occurredAt: Date;
  isContent: boolean;
  /** The clicked message's kind; null when the message is gone. */
  kind: MessageKind | null;
  messageId: string | null;
  campaignId: string | null;
  automationId: string | null;
}

export interface Credit {
  touch: Touch;
  /** The share of the conversion's value this touch earns; the shares of one conversion sum to 1. */
  share: number;
}

const DAY_MS = 86_400_000;

/** The earliest moment a touch may have to count for a conversion at `at`. */
export function windowStart(at: Date, windowDays: number): Date {
  return new Date(at.getTime() - windowDays * DAY_MS);
}

const isMarketing = (touch: Touch) => touch.kind === 'campaign' || touch.kind === 'automation';

/** The touches a conversion at `at` can credit, oldest first: marketing clicks in (at - window, at]. */
export function eligibleTouches(touches: readonly Touch[], at: Date, windowDays: number): Touch[] {
  const from = windowStart(at, windowDays).getTime();
  return touches
    .filter((touch) => isMarketing(touch) && touch.occurredAt.getTime() > from && touch.occurredAt.getTime() <= at.getTime())
    .sort((a, b) => a.occurredAt.getTime() - b.occurredAt.getTime() || a.id.localeCompare(b.id));
}

/** Which touches earn a conversion at `at` under a model, with their shares (empty: unattributed). */
export function creditTouches(model: AttributionModel, touches: readonly Touch[], at: Date, windowDays: number): Credit[] {
  const eligible = eligibleTouches(touches, at, windowDays);
  if (!eligible.length) return [];
  switch (model) {
    case 'last_content_click': {
      const content = eligible.filter((touch) => touch.isContent);
      return content.length ? [{ touch: content[content.length - 1], share: 1 }] : [];
    }
    case 'first_touch':
      return [{ touch: eligible[0], share: 1 }];
    case 'last_touch':
      return [{ touch: eligible[eligible.length - 1], share: 1 }];
    case 'linear':
      return eligible.map((touch) => ({ touch, share: 1 / eligible.length }));
  }
}
