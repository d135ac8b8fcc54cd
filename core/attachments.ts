import mime from 'mime-types';
import type { z } from 'zod';
import type { AttachmentRefSchema } from './message-content';

/** The spec's attachment limits (Limits table), enforced on every send path and on uploads. */
export const ATTACHMENT_LIMITS = {
  perMessage: 20,
  fileBytes: 10 * 1024 * 1024,
  messageBytes: 25 * 1024 * 1024,
  filename: { min: 1, max: 255 },
  contentType: { min: 3, max: 255 },
  contentId: { min: 1, max: 200 },
} as const;

/** Signed URLs: the spec fixes the download's 15 minutes; uploads use the same window. */
export const DOWNLOAD_URL_SECONDS = 15 * 60;
export const UPLOAD_URL_SECONDS = 15 * 60;

/**
 * Extensions refused wherever a filename enters: the list Gmail blocks, plus the remaining script and
 * shortcut types of Outlook's level-1 list. Matching is on the last extension after normalisation.
 */
const EXECUTABLE_EXTENSIONS = new Set([
  'ade', 'adp', 'apk', 'app', 'application', 'appref-ms', 'appx', 'appxbundle', 'bas', 'bat', 'bgi', 'cab', 'chm',
  'cmd', 'com', 'cpl', 'crt', 'diagcab', 'diagcfg', 'diagpack', 'dll', 'dmg', 'ex', 'ex_', 'exe', 'fxp', 'gadget',
  'grp', 'hlp', 'hpj', 'hta', 'img', 'inf', 'ins', 'iso', 'isp', 'its', 'jar', 'jnlp', 'js', 'jse', 'ksh', 'lib',
  'lnk', 'mad', 'maf', 'mag', 'mam', 'maq', 'mar', 'mas', 'mat', 'mau', 'mav', 'maw', 'mcf', 'mda', 'mdb', 'mde',
  'mdt', 'mdw', 'mdz', 'mjs', 'msc', 'msh', 'msh1', 'msh1xml', 'msh2', 'msh2xml', 'mshxml', 'msi', 'msix',
  'msixbundle', 'msp', 'mst', 'nsh', 'ops', 'pcd', 'pif', 'plg', 'prf', 'prg', 'ps1', 'ps1xml', 'ps2', 'ps2xml',
  'psc1', 'psc2', 'psd1', 'psm1', 'pst', 'reg', 'scf', 'scr', 'sct', 'shb', 'shs', 'sys', 'tmp', 'url', 'vb', 'vbe',
  'vbp', 'vbs', 'vhd', 'vhdx', 'vsmacros', 'vsw', 'vxd', 'ws', 'wsc', 'wsf', 'wsh', 'xbap', 'xll', 'xnk',
]);

/**
 * Characters that change how a name is displayed without being part of what the system sees:
 * bidirectional embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069; "invoice\u202Efdp.exe"
 * displays as "invoiceexe.pdf"), marks, and zero-width characters.
 */
const INVISIBLE = /[\u061C\u200B-\u200F\u202A-\u202E\u2060-\u2069\uFEFF]/g;
// eslint-disable-next-line no-control-regex -- control characters are exactly what this refuses
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/;

function extensionOf(name: string): string {
  // Windows drops trailing dots and spaces: "a.exe. " is a.exe.
  const trimmed = name.replace(/[\s.]+$/u, '');
  const dot = trimmed.lastIndexOf('.');
  return dot === -1 ? '' : trimmed.slice(dot + 1);
}

/**
 * The executable extension a file name carries once the tricks that hide it are undone, or null.
 * Compatibility forms fold to ASCII ("ｅｘｅ"), invisible and bidi characters go, only the last path
 * segment counts, and a colon is read every way a system might: an NTFS stream ("a.exe::$DATA" is
 * a.exe), or a character a mail client replaces ("C:report.exe").
 */
export function executableExtension(filename: string): string | null {
  const folded = filename.normalize('NFKC').replace(INVISIBLE, '').toLowerCase();
  const segment = folded.split(/[\\/]/).filter((part) => part.trim() !== '').pop() ?? '';
  const readings = [segment, segment.split(':')[0], segment.split(':').pop() ?? ''];
  return readings.map(extensionOf).find((extension) => EXECUTABLE_EXTENSIONS.has(extension)) ?? null;
}

export function isExecutableFilename(filename: string): boolean {
  return executableExtension(filename) !== null;
}

/** A content type whose registered extension is executable (application/x-msdownload is .exe). */
export function isExecutableContentType(contentType: string): boolean {
  const extension = mime.extension(contentTypeEssence(contentType));
  return extension !== false && EXECUTABLE_EXTENSIONS.has(extension);
}

/** Why a filename is refused, or null. The message is shown to the API caller. */
export function filenameProblem(filename: string): string | null {
  if (CONTROL.test(filename)) return 'must not contain control characters';
  const executable = executableExtension(filename);
  if (executable) return `executable files are not accepted (.${executable})`;
  return null;
}

export function contentTypeProblem(contentType: string): string | null {
  if (!/^[\w!#$&^.+-]+\/[\w!#$&^.+-]+(\s*;.*)?$/.test(contentType)) return 'must be a media type such as application/pdf';
  if (CONTROL.test(contentType)) return 'must not contain control characters';
  if (isExecutableContentType(contentType)) return 'executable content types are not accepted';
  return null;
}

/** A Content-ID goes between angle brackets in a header, so it must not contain them or whitespace. */
export function contentIdProblem(contentId: string): string | null {
  return /^[^\s<>]+$/.test(contentId) && !CONTROL.test(contentId)
    ? null
    : 'must not contain spaces, control characters or angle brackets';
}

/** The spec: "When absent it is inferred from the file name." */
export function inferContentType(filename: string): string {
  return mime.lookup(filename.normalize('NFKC').replace(INVISIBLE, '')) || 'application/octet-stream';
}

/** `text/plain; charset=utf-8` and `Text/Plain` name the same type; parameters do not change it. */
export function contentTypeEssence(contentType: string): string {
  return contentType.split(';')[0].trim().toLowerCase();
}

/**
 * Decodes the spec's base64 `content` (no data: prefix). Line breaks are tolerated, as MIME wraps base64
 * at 76 columns; any other character outside the alphabet is refused rather than silently skipped, which
 * is what Buffer.from would do.
 */
export function decodeBase64Content(content: string): { ok: true; bytes: Buffer } | { ok: false; problem: string } {
  if (/^data:/i.test(content)) return { ok: false, problem: 'must be plain base64, without a data: prefix' };
  const compact = content.replace(/[\r\n\t ]/g, '');
  if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact) || compact.length % 4 === 1) {
    return { ok: false, problem: 'is not valid base64' };
  }
  return { ok: true, bytes: Buffer.from(compact, 'base64') };
}

/** Bytes a base64 string decodes to, computed without decoding (to refuse a huge file cheaply). */
export function base64DecodedLength(content: string): number {
  const compact = content.replace(/[\r\n\t ]/g, '');
  const padding = compact.endsWith('==') ? 2 : compact.endsWith('=') ? 1 : 0;
  return Math.floor((compact.length * 3) / 4) - padding;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isAttachmentId(value: string): boolean {
  return UUID.test(value);
}

/** One item of a send's `attachments`: exactly one of id, content or url (the spec's Attachment sources). */
export interface AttachmentSource {
  id?: string;
  filename?: string;
  content?: string;
  url?: string;
  contentType?: string;
  contentId?: string;
}

/**
 * What a message keeps of an accepted attachment: a stored attachment's id plus how this send shows it.
 * Small enough for a message row and a workflow payload; the bytes stay in the blob store.
 */
export type AttachmentRef = z.infer<typeof AttachmentRefSchema>;

/** The storage key of an attachment's bytes; the workspace prefix keeps tenants apart in the bucket. */
export function attachmentStorageKey(workspaceId: string, attachmentId: string): string {
  return `attachments/${workspaceId}/${attachmentId}`;
}

/**
 * Where a replaced file's new bytes go (PUT /attachments/:id): a key of their own, so the old object serves
 * every read until the row points at the new one, and a failed replacement leaves the attachment as it was.
 */
export function attachmentRevisionKey(workspaceId: string, attachmentId: string, revision: string): string {
  return `${attachmentStorageKey(workspaceId, attachmentId)}.${revision}`;
}

/** `Content-Disposition` for a download, with the RFC 6266/5987 encoded name and an ASCII fallback. */
export function downloadDisposition(filename: string): string {
  const fallback = filename.replace(INVISIBLE, '').replace(/[^\x20-\x7E]|["\\]/g, '_');
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encodeURIComponent(filename.replace(INVISIBLE, ''))}`;
}
