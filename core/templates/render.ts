import { escapingFor, parseBlocks } from './blocks';
import { type ChannelText, chatChannelsOf, type TemplateVersionContent } from './content';
import { blocksDocument, markdownDocument } from './email-html';
import { type RenderLiquidOptions, RenderMemory, renderLiquid } from './liquid';
import { htmlToPlainText } from './plain-text';

export interface RenderedTemplate {
  /** The template version that produced this; a message records it. */
  versionId: string;
  subject: string | null;
  /** Null for the `text` format: such an email is text-only. */
  html: string | null;
  text: string;
  /** The text of each chat channel the template is enabled for; null when it has none. */
  channelText: ChannelText | null;
}

export interface RenderOptions {
  /** A variable the content uses but `variables` lacks is an error (422 template_invalid) instead of empty. */
  strict?: boolean;
  /** What the whole render may allocate, in characters (liquid.ts RenderMemory); per piece only when absent. */
  memoryChars?: number;
}

/** Subjects are one header line: a variable holding a line break must not start another header. */
function oneLine(value: string): string {
  return value.replace(/\s+/g, ' ').trim();
}

function renderBody(
  version: TemplateVersionContent,
  variables: Record<string, unknown>,
  options: RenderLiquidOptions,
): { html: string | null; text: string } {
  switch (version.format) {
    case 'text':
      return { html: null, text: renderLiquid(version.body, variables, 'text', 'body', options).trim() };
    case 'html': {
      const html = renderLiquid(version.body, variables, 'html', 'body', options);
      return { html, text: htmlToPlainText(html) };
    }
    case 'markdown': {
      const html = markdownDocument(renderLiquid(version.body, variables, 'html', 'body', options));
      return { html, text: htmlToPlainText(html) };
    }
    case 'blocks': {
      const blocks = parseBlocks(version.body);
      const html = blocksDocument(blocks, (source, kind, path) => renderLiquid(source, variables, escapingFor(kind), path, options));
      return { html, text: htmlToPlainText(html) };
    }
  }
}

/**
 * Renders a template version with a send's variables. Output is HTML-escaped in HTML contexts (html,
 * markdown, blocks), never in subjects and plain texts. Without a channelText override a chat channel
 * gets the email's plain text.
 */
export function renderTemplate(
  version: TemplateVersionContent,
  variables: Record<string, unknown>,
  renderOptions: RenderOptions = {},
): RenderedTemplate {
  const { memoryChars, ...rest } = renderOptions;
  const options: RenderLiquidOptions = { ...rest, ...(memoryChars === undefined ? {} : { memory: new RenderMemory(memoryChars) }) };
  const subject = version.subject === null ? null : oneLine(renderLiquid(version.subject, variables, 'text', 'subject', options));
  const { html, text } = renderBody(version, variables, options);
  const chats = chatChannelsOf(version.channels);
  let channelText: ChannelText | null = null;
  if (chats.length) {
    channelText = {};
    for (const channel of chats) {
      const override = version.channelText?.[channel];
      channelText[channel] =
        override === undefined ? text : renderLiquid(override, variables, 'text', `channelText.${channel}`, options).trim();
    }
  }
  return { versionId: version.id, subject, html, text, channelText };
}
