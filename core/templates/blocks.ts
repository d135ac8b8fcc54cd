import { z } from 'zod';
import { AppError } from '../errors';
import { jsonErrorPosition } from './json-position';
import type { Escaping } from './liquid';

/**
 * The `blocks` format: a template body that is a JSON array of blocks, rendered to email-safe table
 * HTML (see email-html.ts). Every string in a block may use Liquid. `text` and `footer` hold Markdown;
 * the other strings are plain text or URLs. docs/templates-and-attachments.md is the reference.
 */
const align = z.enum(['left', 'center', 'right']);
const color = z.string().regex(/^#(?:[0-9a-fA-F]{3}){1,2}$/, 'must be a hex colour such as #1a73e8');
const blockId = z
  .string()
  .regex(/^[A-Za-z0-9_-]{1,64}$/, 'must be 1 to 64 letters, digits, _ or -')
  .describe('Names the block; links in it carry it as data-link-id (the tracked linkId)');
const url = z.string().trim().min(1).max(2_000);

const heading = z.strictObject({
  type: z.literal('heading'),
  id: blockId.optional(),
  text: z.string().min(1).max(500),
  level: z.union([z.literal(1), z.literal(2), z.literal(3)]).optional(),
  align: align.optional(),
});
const text = z.strictObject({
  type: z.literal('text'),
  id: blockId.optional(),
  text: z.string().min(1).max(20_000),
  align: align.optional(),
});
const button = z.strictObject({
  type: z.literal('button'),
  id: blockId.optional(),
  label: z.string().min(1).max(200),
  url,
  color: color.optional(),
  textColor: color.optional(),
  align: align.optional(),
});
const image = z.strictObject({
  type: z.literal('image'),
  id: blockId.optional(),
  src: url,
  alt: z.string().max(500).optional(),
  width: z.number().int().min(1).max(600).optional(),
  href: url.optional(),
  logo: z.boolean().optional().describe('Marks the image as the sender\'s logo (its clicks are not content clicks)'),
  align: align.optional(),
});
const divider = z.strictObject({ type: z.literal('divider'), id: blockId.optional() });
const footer = z.strictObject({
  type: z.literal('footer'),
  id: blockId.optional(),
  text: z.string().min(1).max(5_000),
  align: align.optional(),
});

const leafBlock = z.discriminatedUnion('type', [heading, text, button, image, divider, footer]);
const columns = z.strictObject({
  type: z.literal('columns'),
  id: blockId.optional(),
  columns: z.array(z.strictObject({ blocks: z.array(leafBlock).max(20) })).min(2).max(4),
});

export const BlockSchema = z.discriminatedUnion('type', [heading, text, button, image, divider, footer, columns]);
export const BlocksDocumentSchema = z.array(BlockSchema).min(1).max(100);

export type Block = z.infer<typeof BlockSchema>;
export type LeafBlock = z.infer<typeof leafBlock>;

function pathText(field: string, path: readonly PropertyKey[]): string {
  return path.reduce<string>((text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}.${String(key)}`), field);
}

/** Parses and checks a blocks body; a JSON or shape error is a 422 template_invalid naming where. */
export function parseBlocks(body: string, field = 'body'): Block[] {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new AppError('template_invalid', `${field}: not valid JSON: ${message}`, { field, ...jsonErrorPosition(body) });
  }
  const parsed = BlocksDocumentSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = pathText(field, issue.path);
    throw new AppError('template_invalid', `${where}: ${issue.message}`, { field: where, line: null, column: null });
  }
  return parsed.data;
}

/** How a block string is written: plain text (escaped whole), Markdown, or a URL. */
export type BlockFieldKind = 'plain' | 'markdown' | 'url' | 'image-url';

export interface BlockField {
  path: string;
  source: string;
  kind: BlockFieldKind;
}

/** The Liquid escaping that suits a kind: Markdown is HTML, so its variables are escaped as they render. */
export function escapingFor(kind: BlockFieldKind): Escaping {
  return kind === 'markdown' ? 'html' : 'text';
}

function leafFields(block: LeafBlock, path: string): BlockField[] {
  switch (block.type) {
    case 'heading':
      return [{ path: `${path}.text`, source: block.text, kind: 'plain' }];
    case 'text':
    case 'footer':
      return [{ path: `${path}.text`, source: block.text, kind: 'markdown' }];
    case 'button':
      return [
        { path: `${path}.label`, source: block.label, kind: 'plain' },
        { path: `${path}.url`, source: block.url, kind: 'url' },
      ];
    case 'image':
      return [
        { path: `${path}.src`, source: block.src, kind: 'image-url' },
        ...(block.alt ? [{ path: `${path}.alt`, source: block.alt, kind: 'plain' as const }] : []),
        ...(block.href ? [{ path: `${path}.href`, source: block.href, kind: 'url' as const }] : []),
      ];
    case 'divider':
      return [];
  }
}

/** Every Liquid-bearing string of a document, with its path for error messages. */
export function blockFields(blocks: readonly Block[], field = 'body'): BlockField[] {
  return blocks.flatMap((block, index) => {
    const path = `${field}[${index}]`;
    if (block.type !== 'columns') return leafFields(block, path);
    return block.columns.flatMap((column, columnIndex) =>
      column.blocks.flatMap((leaf, leafIndex) => leafFields(leaf, `${path}.columns[${columnIndex}].blocks[${leafIndex}]`)),
    );
  });
}

const LINK_SCHEMES = /^(https?:\/\/|mailto:|tel:)/i;
const IMAGE_SCHEMES = /^(https?:\/\/|cid:)/i;

/** A URL a link or image may use: web links, mail and phone links; images also from cid: inline parts. */
export function allowedUrl(value: string, kind: 'url' | 'image-url'): boolean {
  return (kind === 'url' ? LINK_SCHEMES : IMAGE_SCHEMES).test(value.trim());
}

const hasLiquid = (source: string) => source.includes('{{') || source.includes('{%');

/** A URL written without Liquid can be checked when the template is saved; one built from variables, only when rendered. */
export function checkLiteralUrls(fields: readonly BlockField[]): void {
  for (const field of fields) {
    if ((field.kind === 'url' || field.kind === 'image-url') && !hasLiquid(field.source) && !allowedUrl(field.source, field.kind)) {
      const allowed = field.kind === 'url' ? 'https://, http://, mailto: or tel:' : 'https://, http:// or cid:';
      throw new AppError('template_invalid', `${field.path}: must start with ${allowed}`, {
        field: field.path,
        line: null,
        column: null,
      });
    }
  }
}
