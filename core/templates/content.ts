/** What a template is made of, independent of storage: the part of it that each version freezes. */

export const TEMPLATE_FORMATS = ['markdown', 'html', 'text', 'blocks'] as const;
export type TemplateFormat = (typeof TEMPLATE_FORMATS)[number];

export const TEMPLATE_CHANNELS = ['email', 'whatsapp', 'telegram'] as const;
export type TemplateChannel = (typeof TEMPLATE_CHANNELS)[number];

/** Chat channels take plain text; channelText may override what the body gives them. */
export const CHAT_CHANNELS = ['whatsapp', 'telegram'] as const;
export type ChatChannel = (typeof CHAT_CHANNELS)[number];

export type ChannelText = Partial<Record<ChatChannel, string>>;

export const TEMPLATE_LIMITS = {
  name: { min: 1, max: 200 },
  subject: { max: 998 },
  body: { max: 500_000 },
  channelText: { max: 4_096 },
} as const;

export interface TemplateContent {
  channels: TemplateChannel[];
  format: TemplateFormat;
  subject: string | null;
  body: string;
  channelText: ChannelText | null;
}

/** A frozen version of a template's content; a message records the id of the version that rendered it. */
export interface TemplateVersionContent extends TemplateContent {
  id: string;
}

/** The spec: the derived primary channel; email wins when enabled, otherwise the first channel listed. */
export function primaryChannel(channels: readonly TemplateChannel[]): TemplateChannel {
  return channels.includes('email') ? 'email' : (channels[0] ?? 'email');
}

/** Channels in the order given, each once. */
export function distinctChannels(channels: readonly TemplateChannel[]): TemplateChannel[] {
  return [...new Set(channels)];
}

export function chatChannelsOf(channels: readonly TemplateChannel[]): ChatChannel[] {
  return CHAT_CHANNELS.filter((channel) => channels.includes(channel));
}

/** Whether two contents render alike; a change of anything else (the name) needs no new version. */
export function sameContent(a: TemplateContent, b: TemplateContent): boolean {
  const canonical = (content: TemplateContent) => {
    const texts = content.channelText && CHAT_CHANNELS.map((channel) => content.channelText?.[channel] ?? null);
    return JSON.stringify([content.channels, content.format, content.subject, content.body, texts]);
  };
  return canonical(a) === canonical(b);
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * A send's templateId is an id or a name. Names shaped like a uuid are refused when a template is saved,
 * so the two can never be confused.
 */
export function looksLikeTemplateId(idOrName: string): boolean {
  return UUID.test(idOrName);
}
