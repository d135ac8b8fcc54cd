import { AppError } from '../errors';
import { blockFields, checkLiteralUrls, escapingFor, parseBlocks } from './blocks';
import { CHAT_CHANNELS, type TemplateContent, type TemplateFormat } from './content';
import { type Escaping, liquidVariables, parseLiquid } from './liquid';

/** The Liquid pieces of a template's content, each with the escaping it renders under. */
interface LiquidPiece {
  field: string;
  source: string;
  escaping: Escaping;
}

const BODY_ESCAPING: Record<Exclude<TemplateFormat, 'blocks'>, Escaping> = {
  html: 'html',
  markdown: 'html',
  text: 'text',
};

function pieces(content: TemplateContent): LiquidPiece[] {
  const found: LiquidPiece[] = [];
  if (content.subject !== null) found.push({ field: 'subject', source: content.subject, escaping: 'text' });
  if (content.format === 'blocks') {
    const blocks = parseBlocks(content.body);
    const fields = blockFields(blocks);
    checkLiteralUrls(fields);
    found.push(...fields.map((field) => ({ field: field.path, source: field.source, escaping: escapingFor(field.kind) })));
  } else {
    found.push({ field: 'body', source: content.body, escaping: BODY_ESCAPING[content.format] });
  }
  for (const channel of CHAT_CHANNELS) {
    const text = content.channelText?.[channel];
    if (text !== undefined) found.push({ field: `channelText.${channel}`, source: text, escaping: 'text' });
  }
  return found;
}

/** channelText overrides a chat channel's text, so an override for a channel the template lacks is a mistake. */
function checkChannelText(content: TemplateContent): void {
  const stray = CHAT_CHANNELS.filter((channel) => content.channelText?.[channel] !== undefined && !content.channels.includes(channel));
  if (stray.length) {
    throw AppError.validation({
      formErrors: [],
      fieldErrors: { channelText: stray.map((channel) => `${channel} is not among the template's channels`) },
    });
  }
}

/**
 * Checks a template's content when it is saved, so mistakes surface as a 422 then rather than at send
 * time: Liquid syntax, unknown filters, unsupported tags, the blocks document, literal link addresses.
 * Returns the variables the content expects, in order of first use (the spec: derived, never declared).
 */
export function analyseTemplate(content: TemplateContent): { variables: string[] } {
  checkChannelText(content);
  const variables = new Set<string>();
  for (const piece of pieces(content)) {
    const parsed = parseLiquid(piece.source, piece.escaping, piece.field);
    for (const variable of liquidVariables(parsed, piece.escaping)) variables.add(variable);
  }
  return { variables: [...variables] };
}

/** A send's or campaign's own content, which renders with its variables when it is personalized (core/message-content.ts). */
export interface InlineContent {
  subject?: string | null;
  html?: string | null;
  text?: string | null;
}

/**
 * Checks inline content as a template's is checked when saved, each piece under its own field name, so a
 * mistake is a 422 `template_invalid` naming `subject`, `html` or `text` before anything is accepted, rather
 * than a message that fails at send time (or, worse, one sent with its merge tags written out).
 */
export function analyseInlineContent(content: InlineContent): { variables: string[] } {
  const variables = new Set<string>();
  const pieces: LiquidPiece[] = [];
  if (content.subject) pieces.push({ field: 'subject', source: content.subject, escaping: 'text' });
  if (content.html) pieces.push({ field: 'html', source: content.html, escaping: 'html' });
  if (content.text) pieces.push({ field: 'text', source: content.text, escaping: 'text' });
  for (const piece of pieces) {
    for (const variable of liquidVariables(parseLiquid(piece.source, piece.escaping, piece.field), piece.escaping)) variables.add(variable);
  }
  return { variables: [...variables] };
}
