import type { Sequelize } from 'sequelize';
import {
  ATTACHMENT_LIMITS,
  type AttachmentRef,
  type AttachmentSource,
  base64DecodedLength,
  contentIdProblem,
  contentTypeEssence,
  contentTypeProblem,
  decodeBase64Content,
  filenameProblem,
  inferContentType,
  isAttachmentId,
} from '../core/attachments';
import { AppError, isAppError } from '../core/errors';
import type { BlobStore } from '../db/blob-store';
import { type AttachmentRecord, findAttachments } from '../db/repositories/attachments';
import { type AttachmentFiles, createAttachmentFiles } from '../db/attachment-files';
import { fetchPublicFile, PublicFetchError, type PublicFetchOptions } from '../infra/public-fetch';

/**
 * The one place a send's `attachments` are resolved, for every send path (emails, messages, campaigns,
 * inbox send and reply, journeys' attachmentIds).
 *
 * - `accept`, when the send is accepted (API): checks every item and the message's limits, reconciles a
 *   pending upload (its first use), and stores `content` and `url` items as attachments, fetching URLs
 *   through the SSRF-safe fetcher. What it returns (ids and names, no bytes) goes on the message and
 *   into workflow payloads; a campaign fetches a URL once, not once per recipient.
 * - `load`, when the message is sent (activity): reads the bytes. An attachment deleted since is
 *   reported missing and left out, never a failure (the spec's state table).
 */
export interface AttachmentSourcesDeps {
  db: Sequelize;
  blobs: BlobStore;
  /** Overrides of the URL fetcher's options (tests point it at a local stand-in server). */
  fetch?: Partial<PublicFetchOptions>;
}

export interface LoadedAttachment {
  attachmentId: string;
  filename: string;
  contentType: string;
  content: Buffer;
  contentId?: string;
}

export interface MissingAttachment {
  attachmentId: string;
  filename: string;
  /** `deleted`: deleted (or its file removed) after the send was accepted; `not_uploaded`: a pending upload that never arrived or was refused. */
  reason: 'deleted' | 'not_uploaded';
}

export interface LoadedAttachments {
  attachments: LoadedAttachment[];
  missing: MissingAttachment[];
}

export interface AcceptedAttachments {
  refs: AttachmentRef[];
  discard: () => Promise<void>;
}

/** An item once checked: either an existing attachment or bytes to store. */
export type Candidate =
  | { kind: 'stored'; record: AttachmentRecord; filename: string; contentType: string; contentId?: string }
  | { kind: 'new'; bytes: Buffer; filename: string; contentType: string; contentId?: string; sourceUrl?: string };

function refused(problems: string[]): AppError {
  return AppError.validation({ formErrors: [], fieldErrors: { attachments: problems } });
}

/** Shape checks the zod schema also makes, repeated so that callers without it (journeys) get the same answer. */
function shapeProblems(items: readonly AttachmentSource[]): string[] {
  const problems: string[] = [];
  if (items.length > ATTACHMENT_LIMITS.perMessage) problems.push(`at most ${ATTACHMENT_LIMITS.perMessage} attachments per message`);
  const contentIds = new Set<string>();
  items.forEach((item, index) => {
    const at = `attachments[${index}]`;
    const sources = [item.id, item.content, item.url].filter((source) => source !== undefined).length;
    if (sources !== 1) problems.push(`${at}: give exactly one of id, content or url`);
    if (item.id !== undefined && !isAttachmentId(item.id)) problems.push(`${at}.id: not an attachment id`);
    if (item.id === undefined && item.filename === undefined) problems.push(`${at}.filename: required with content or url`);
    const filename = item.filename !== undefined ? filenameProblem(item.filename) : null;
    if (filename) problems.push(`${at}.filename: ${filename}`);
    const contentType = item.contentType !== undefined ? contentTypeProblem(item.contentType) : null;
    if (contentType) problems.push(`${at}.contentType: ${contentType}`);
    if (item.contentId !== undefined) {
      const contentId = contentIdProblem(item.contentId);
      if (contentId) problems.push(`${at}.contentId: ${contentId}`);
      if (contentIds.has(item.contentId)) problems.push(`${at}.contentId: used twice in this message`);
      contentIds.add(item.contentId);
    }
  });
  return problems;
}

function urlContentType(item: AttachmentSource, filename: string, served: string | null): string {
  if (item.contentType) return item.contentType;
  const inferred = inferContentType(filename);
  if (inferred !== 'application/octet-stream' || !served || contentTypeProblem(served)) return inferred;
  return contentTypeEssence(served);
}

/** What resolving attachments works with: the deps and the attachment files over them. */
export interface AttachmentSourcing extends AttachmentSourcesDeps {
  files: AttachmentFiles;
}

export async function candidateFromStored(
  { files }: AttachmentSourcing,
  workspaceId: string,
  item: AttachmentSource,
  at: string,
  record: AttachmentRecord | undefined,
): Promise<Candidate | string> {
  if (!record || record.status === 'deleted') return `${at}.id: no such attachment`;
  let current: AttachmentRecord;
  try {
    // A signed upload's first use confirms it (the state table).
    current = await files.reconcile(workspaceId, record);
  } catch (error) {
    if (isAppError(error) && error.code === 'attachment_rejected') return `${at}.id: ${error.message}`;
    throw error;
  }
  if (current.status !== 'ready') return `${at}.id: no such attachment`;
  const filename = item.filename ?? current.filename;
  const fileProblem = filenameProblem(filename);
  if (fileProblem) return `${at}.filename: ${fileProblem}`;
  return { kind: 'stored', record: current, filename, contentType: item.contentType ?? current.contentType, contentId: item.contentId };
}

export function candidateFromContent(item: AttachmentSource & { content: string; filename: string }, at: string): Candidate | string {
  if (base64DecodedLength(item.content) > ATTACHMENT_LIMITS.fileBytes) {
    return `${at}.content: larger than ${ATTACHMENT_LIMITS.fileBytes} bytes`;
  }
  const decoded = decodeBase64Content(item.content);
  if (!decoded.ok) return `${at}.content: ${decoded.problem}`;
  if (decoded.bytes.length === 0) return `${at}.content: the file is empty`;
  const contentType = item.contentType ?? inferContentType(item.filename);
  return { kind: 'new', bytes: decoded.bytes, filename: item.filename, contentType, contentId: item.contentId };
}

export async function candidateFromUrl(
  deps: Pick<AttachmentSourcesDeps, 'fetch'>,
  item: AttachmentSource & { url: string; filename: string },
  at: string,
  budget: { remaining: number },
): Promise<Candidate | string> {
  try {
    const fetched = await fetchPublicFile(item.url, { maxBytes: ATTACHMENT_LIMITS.fileBytes, ...deps.fetch, sharedBudget: budget });
    if (fetched.bytes.length === 0) return `${at}.url: the file is empty`;
    const contentType = urlContentType(item, item.filename, fetched.contentType);
    return { kind: 'new', bytes: fetched.bytes, filename: item.filename, contentType, contentId: item.contentId, sourceUrl: item.url };
  } catch (error) {
    if (error instanceof PublicFetchError) return `${at}.url: could not be fetched: ${error.message}`;
    throw error;
  }
}

const sizeOf = (candidate: Candidate) => (candidate.kind === 'stored' ? candidate.record.size : candidate.bytes.length);

/**
 * Stored and inline files first; URLs are fetched last, concurrently, sharing what the message has left
 * of its 25 MB, so a message of many large URLs never holds more than that in memory.
 */
export async function resolveCandidates(sourcing: AttachmentSourcing, workspaceId: string, items: readonly AttachmentSource[]): Promise<Array<Candidate | string>> {
  const ids = items.flatMap((item) => (item.id === undefined ? [] : [item.id]));
  const records = new Map((await findAttachments(sourcing.db, workspaceId, ids)).map((record) => [record.id, record]));
  const local = await Promise.all(
    items.map((item, index) => {
      const at = `attachments[${index}]`;
      if (item.id !== undefined) return candidateFromStored(sourcing, workspaceId, item, at, records.get(item.id));
      if (item.content !== undefined) return candidateFromContent({ ...item, content: item.content, filename: item.filename ?? '' }, at);
      return null;
    }),
  );
  const known = local.reduce((sum, candidate) => sum + (candidate && typeof candidate !== 'string' ? sizeOf(candidate) : 0), 0);
  const budget = { remaining: Math.max(0, ATTACHMENT_LIMITS.messageBytes - known) };
  return Promise.all(
    items.map((item, index) => {
      const resolved = local[index];
      if (resolved !== null) return resolved;
      return candidateFromUrl(sourcing, { ...item, url: item.url ?? '', filename: item.filename ?? '' }, `attachments[${index}]`, budget);
    }),
  );
}

/**
 * Checks a send's items and stores new files; the refs keep the items' order. Throws 422 validation_error.
 * `discard` removes the files this call stored, for a send refused after its attachments were ready.
 */
export async function acceptAttachments(sourcing: AttachmentSourcing, workspaceId: string, items: readonly AttachmentSource[]): Promise<AcceptedAttachments> {
  const shape = shapeProblems(items);
  if (shape.length) throw refused(shape);
  const checked = await resolveCandidates(sourcing, workspaceId, items);
  const problems = checked.filter((candidate): candidate is string => typeof candidate === 'string');
  if (problems.length) throw refused(problems);
  const ready = checked as Candidate[];
  const total = ready.reduce((sum, candidate) => sum + sizeOf(candidate), 0);
  if (total > ATTACHMENT_LIMITS.messageBytes) {
    throw refused([`the attachments add up to ${total} bytes; a message may carry ${ATTACHMENT_LIMITS.messageBytes}`]);
  }
  const stored: string[] = [];
  const store = async (candidate: Extract<Candidate, { kind: 'new' }>) => {
    const record = await sourcing.files.store(workspaceId, { ...candidate, origin: 'send', sourceUrl: candidate.sourceUrl });
    stored.push(record.id);
    return record;
  };
  const refs = await Promise.all(
    ready.map(async (candidate) => {
      const record = candidate.kind === 'stored' ? candidate.record : await store(candidate);
      const ref: AttachmentRef = { id: record.id, filename: candidate.filename, contentType: candidate.contentType, size: record.size };
      if (candidate.contentId !== undefined) ref.contentId = candidate.contentId;
      return ref;
    }),
  );
  return { refs, discard: async () => void (await Promise.all(stored.map((id) => sourcing.files.remove(workspaceId, id)))) };
}

/** The bytes of an accepted message's attachments, leaving out (and naming) any deleted since. */
export async function loadAcceptedAttachments({ db, blobs, files }: AttachmentSourcing, workspaceId: string, refs: readonly AttachmentRef[]): Promise<LoadedAttachments> {
  const records = new Map((await findAttachments(db, workspaceId, refs.map((ref) => ref.id))).map((record) => [record.id, record]));
  const outcomes = await Promise.all(
    refs.map(async (ref): Promise<LoadedAttachment | MissingAttachment> => {
      const gone: MissingAttachment = { attachmentId: ref.id, filename: ref.filename, reason: 'deleted' };
      const record = records.get(ref.id);
      if (!record || record.status === 'deleted') return gone;
      let current: AttachmentRecord;
      try {
        current = await files.reconcile(workspaceId, record);
      } catch (error) {
        if (isAppError(error) && error.code === 'attachment_rejected') return { ...gone, reason: 'not_uploaded' };
        throw error;
      }
      if (current.status !== 'ready') return gone;
      const content = await blobs.get(current.storageKey, ATTACHMENT_LIMITS.fileBytes);
      if (!content) return gone;
      const loaded: LoadedAttachment = { attachmentId: ref.id, filename: ref.filename, contentType: ref.contentType, content };
      if (ref.contentId !== undefined) loaded.contentId = ref.contentId;
      return loaded;
    }),
  );
  return {
    attachments: outcomes.filter((outcome): outcome is LoadedAttachment => 'content' in outcome),
    missing: outcomes.filter((outcome): outcome is MissingAttachment => 'reason' in outcome),
  };
}

export function createAttachmentSources(deps: AttachmentSourcesDeps) {
  const sourcing: AttachmentSourcing = { ...deps, files: createAttachmentFiles(deps) };
  return {
    accept: (workspaceId: string, items: readonly AttachmentSource[]) => acceptAttachments(sourcing, workspaceId, items),
    load: (workspaceId: string, refs: readonly AttachmentRef[]) => loadAcceptedAttachments(sourcing, workspaceId, refs),
  };
}

export type AttachmentSources = ReturnType<typeof createAttachmentSources>;
