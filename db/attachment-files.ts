import { randomUUID } from 'node:crypto';
import type { Sequelize } from 'sequelize';
import {
  ATTACHMENT_LIMITS,
  attachmentRevisionKey,
  attachmentStorageKey,
  contentTypeEssence,
  DOWNLOAD_URL_SECONDS,
  downloadDisposition,
  UPLOAD_URL_SECONDS,
} from '../core/attachments';
import { AppError } from '../core/errors';
import type { BlobStore } from './blob-store';
import { automationsUsing } from './repositories/automations';
import {
  type AttachmentOrigin,
  type AttachmentRecord,
  type AttachmentReplacement,
  findAttachment,
  insertAttachment,
  markAttachmentDeleted,
  markAttachmentReady,
  replaceAttachmentFile,
  setAttachmentReplacement,
} from './repositories/attachments';

export interface AttachmentFilesDeps {
  db: Sequelize;
  blobs: BlobStore;
}

export interface NewFile {
  filename: string;
  contentType: string;
  bytes: Buffer;
  origin: AttachmentOrigin;
  sourceUrl?: string;
}

export interface SignedUpload {
  attachment: AttachmentRecord;
  uploadUrl: string;
  expiresIn: number;
}

/** Stores bytes already in hand; the object is written before the row, so a ready row always has its bytes. */
export async function storeFile({ db, blobs }: AttachmentFilesDeps, workspaceId: string, file: NewFile): Promise<AttachmentRecord> {
  const id = randomUUID();
  const storageKey = attachmentStorageKey(workspaceId, id);
  await blobs.put(storageKey, file.bytes, file.contentType);
  return insertAttachment(db, workspaceId, {
    id,
    filename: file.filename,
    contentType: file.contentType,
    size: file.bytes.length,
    status: 'ready',
    origin: file.origin,
    sourceUrl: file.sourceUrl ?? null,
    storageKey,
  });
}

/** A pending attachment and the URL its bytes go to, with the declared type and length pinned in the signature. */
export async function startSignedUpload({ db, blobs }: AttachmentFilesDeps, workspaceId: string, file: { filename: string; contentType: string; size: number }): Promise<SignedUpload> {
  const id = randomUUID();
  const storageKey = attachmentStorageKey(workspaceId, id);
  const uploadUrl = await blobs.presignPut(storageKey, { contentType: file.contentType, size: file.size }, UPLOAD_URL_SECONDS);
  const attachment = await insertAttachment(db, workspaceId, { ...file, id, status: 'pending', origin: 'upload', sourceUrl: null, storageKey });
  return { attachment, uploadUrl, expiresIn: UPLOAD_URL_SECONDS };
}

/** How a stored upload differs from what was declared for it (empty when it matches). */
function uploadProblems(stored: { size: number; contentType?: string | null }, declared: { size: number; contentType: string }): string[] {
  const problems: string[] = [];
  if (stored.size !== declared.size) problems.push(`the file is ${stored.size} bytes but ${declared.size} were declared`);
  if (stored.size > ATTACHMENT_LIMITS.fileBytes) problems.push(`the file is larger than ${ATTACHMENT_LIMITS.fileBytes} bytes`);
  if (contentTypeEssence(stored.contentType ?? '') !== contentTypeEssence(declared.contentType)) {
    problems.push(`the file was uploaded as ${stored.contentType ?? 'no type'} but ${declared.contentType} was declared`);
  }
  return problems;
}

/**
 * Makes a pending attachment ready with the size and type the store reports. The signature pins both
 * on real S3, but not every S3-compatible store checks signatures, so they are compared here too; a
 * mismatching file is removed (the upload URL may be used again while it is valid) and refused with
 * 422 attachment_rejected. Returns the attachment as it now is (ready, or deleted meanwhile).
 */
export async function reconcileUpload({ db, blobs }: AttachmentFilesDeps, workspaceId: string, attachment: AttachmentRecord): Promise<AttachmentRecord> {
  if (attachment.status !== 'pending') return attachment;
  const stored = await blobs.head(attachment.storageKey);
  if (!stored) {
    throw new AppError('attachment_rejected', 'No file has been uploaded to the attachment\'s uploadUrl yet', {
      id: attachment.id,
      reason: 'not_uploaded',
    });
  }
  const problems = uploadProblems(stored, attachment);
  if (problems.length) {
    await blobs.delete(attachment.storageKey);
    throw new AppError('attachment_rejected', `The uploaded file was refused: ${problems.join('; ')}`, {
      id: attachment.id,
      reason: 'mismatch',
    });
  }
  const ready = await markAttachmentReady(db, workspaceId, attachment.id, {
    size: stored.size,
    contentType: stored.contentType ?? attachment.contentType,
  });
  return ready ?? ((await findAttachment(db, workspaceId, attachment.id)) as AttachmentRecord);
}

/** A signed GET valid 15 minutes (the spec), offering the file under its own name. */
export function downloadUrl({ blobs }: Pick<AttachmentFilesDeps, 'blobs'>, attachment: AttachmentRecord): Promise<string> {
  return blobs.presignGet(
    attachment.storageKey,
    { contentType: attachment.contentType, disposition: downloadDisposition(attachment.filename) },
    DOWNLOAD_URL_SECONDS,
  );
}

/**
 * Deletes the row and the object together: if the store refuses, the row stays live and the call can
 * be repeated. False when there is no live attachment of that id.
 */
/**
 * Deletes the file unless a live automation attaches it (every enrollment would send without it):
 * 'in_use' names the first such automation.
 */
export async function removeFile({ db, blobs }: AttachmentFilesDeps, workspaceId: string, attachmentId: string): Promise<'deleted' | 'not_found' | { inUseBy: { id: string; name: string } }> {
  const [automation] = await automationsUsing(db, workspaceId, { attachmentId });
  if (automation) return { inUseBy: automation };
  return db.transaction(async (transaction) => {
    const storageKeys = await markAttachmentDeleted(db, workspaceId, attachmentId, transaction);
    if (!storageKeys) return 'not_found';
    for (const key of storageKeys) await blobs.delete(key);
    return 'deleted';
  });
}

/**
 * Swaps a live attachment's file, keeping its id (PUT /attachments/:id): the new bytes are written under a
 * key of their own first, then the row points at them, then the old object goes. Journeys name
 * attachments by id, so their versions stay as they are (the spec's Versioning rule 3) and their next
 * messages carry the new file. Null when there is no live attachment of that id (the new object is removed).
 */
export async function replaceFile(
  { db, blobs }: AttachmentFilesDeps,
  workspaceId: string,
  attachmentId: string,
  file: { filename: string; contentType: string; bytes: Buffer },
): Promise<AttachmentRecord | null> {
  const storageKey = attachmentRevisionKey(workspaceId, attachmentId, randomUUID());
  await blobs.put(storageKey, file.bytes, file.contentType);
  const replaced = await replaceAttachmentFile(db, workspaceId, attachmentId, {
    filename: file.filename,
    contentType: file.contentType,
    size: file.bytes.length,
    storageKey,
  });
  if (!replaced) {
    await blobs.delete(storageKey);
    return null;
  }
  await removeUnused(blobs, replaced.unusedKeys);
  return replaced.attachment;
}

/** A leftover old object is only storage: every read goes through the row, which no longer names it. */
async function removeUnused(blobs: BlobStore, keys: readonly string[]): Promise<void> {
  await Promise.all(keys.map((key) => blobs.delete(key).catch(() => undefined)));
}

/**
 * A signed replacement (PUT /attachments/:id with a size): the URL the new file goes to, under a key of its
 * own, with the declared type and length pinned. The attachment keeps its current file until the upload is
 * confirmed (`finishReplacement`), so journeys that attach it never send without a file meanwhile.
 */
export async function startSignedReplacement(
  { db, blobs }: AttachmentFilesDeps,
  workspaceId: string,
  attachmentId: string,
  file: { filename: string; contentType: string; size: number },
): Promise<SignedUpload | null> {
  const storageKey = attachmentRevisionKey(workspaceId, attachmentId, randomUUID());
  const uploadUrl = await blobs.presignPut(storageKey, { contentType: file.contentType, size: file.size }, UPLOAD_URL_SECONDS);
  const set = await setAttachmentReplacement(db, workspaceId, attachmentId, { ...file, storageKey });
  if (!set) return null;
  if (set.displacedKey) await removeUnused(blobs, [set.displacedKey]);
  return { attachment: set.attachment, uploadUrl, expiresIn: UPLOAD_URL_SECONDS };
}

/**
 * Confirms a signed replacement: the uploaded file is checked against what was declared (as a first
 * upload's is: 422 attachment_rejected, not_uploaded or mismatch), then `accept` may still refuse its size
 * (the journeys that attach it), then the attachment points at it and the old file goes.
 */
export async function finishReplacement(
  { db, blobs }: AttachmentFilesDeps,
  workspaceId: string,
  attachment: AttachmentRecord & { replacement: AttachmentReplacement },
  accept: (size: number) => Promise<void>,
): Promise<AttachmentRecord> {
  const { replacement } = attachment;
  const stored = await blobs.head(replacement.storageKey);
  if (!stored) {
    throw new AppError('attachment_rejected', 'No file has been uploaded to the replacement\'s uploadUrl yet; the attachment keeps its current file', {
      id: attachment.id,
      reason: 'not_uploaded',
    });
  }
  const problems = uploadProblems(stored, replacement);
  if (problems.length) {
    await blobs.delete(replacement.storageKey);
    throw new AppError('attachment_rejected', `The uploaded replacement was refused: ${problems.join('; ')}; the attachment keeps its current file`, {
      id: attachment.id,
      reason: 'mismatch',
    });
  }
  await accept(stored.size);
  const replaced = await replaceAttachmentFile(
    db,
    workspaceId,
    attachment.id,
    { filename: replacement.filename, contentType: stored.contentType ?? replacement.contentType, size: stored.size, storageKey: replacement.storageKey },
    replacement.storageKey,
  );
  if (!replaced) return (await findAttachment(db, workspaceId, attachment.id)) as AttachmentRecord;
  await removeUnused(blobs, replaced.unusedKeys);
  return replaced.attachment;
}

/**
 * An attachment's row and its bytes kept in step: what POST /attachments and the send paths share.
 * The state table: created with content → ready; created with a size → pending until confirmed or first
 * used; deleted → sends that still name it go without it.
 */
export function createAttachmentFiles(deps: AttachmentFilesDeps) {
  return {
    store: (workspaceId: string, file: NewFile) => storeFile(deps, workspaceId, file),
    startSignedUpload: (workspaceId: string, file: { filename: string; contentType: string; size: number }) => startSignedUpload(deps, workspaceId, file),
    reconcile: (workspaceId: string, attachment: AttachmentRecord) => reconcileUpload(deps, workspaceId, attachment),
    downloadUrl: (attachment: AttachmentRecord) => downloadUrl(deps, attachment),
    remove: (workspaceId: string, attachmentId: string) => removeFile(deps, workspaceId, attachmentId),
    replace: (workspaceId: string, attachmentId: string, file: { filename: string; contentType: string; bytes: Buffer }) =>
      replaceFile(deps, workspaceId, attachmentId, file),
    startSignedReplacement: (workspaceId: string, attachmentId: string, file: { filename: string; contentType: string; size: number }) =>
      startSignedReplacement(deps, workspaceId, attachmentId, file),
    finishReplacement: (workspaceId: string, attachment: AttachmentRecord & { replacement: AttachmentReplacement }, accept: (size: number) => Promise<void>) =>
      finishReplacement(deps, workspaceId, attachment, accept),
  };
}

export type AttachmentFiles = ReturnType<typeof createAttachmentFiles>;
