import {
  type BucketLocationConstraint,
  CreateBucketCommand,
  type CreateBucketCommandInput,
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  PutObjectCommand,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { Config } from '../core/config';

/**
 * The S3-compatible store for blobs (attachments now, raw inbound mail later). Credentials come from the
 * AWS SDK's own chain (AWS_ACCESS_KEY_ID, roles); the endpoint, when set, points at a stand-in or
 * another S3-compatible service.
 */
export interface BlobStoreOptions {
  bucket: string;
  region: string;
  endpoint?: string;
  /** Create the bucket on first use when it is missing: development and tests, never production. */
  createBucket: boolean;
  /** Bounds on each call; BLOB_STORE_LIMITS unless given (tests shorten them). */
  limits?: Partial<BlobStoreLimits>;
}

export interface BlobStoreLimits {
  /** To open the connection. */
  connectMs: number;
  /** From sending the request (its body included) to the response's headers. */
  requestMs: number;
  /** Of silence on the socket at any point, a download's body included. */
  idleMs: number;
  /** Tries per call, the first included (throttling and network errors are retried with backoff). */
  maxAttempts: number;
}

/**
 * Without these the SDK waits on a store that accepts connections but never answers for as long as the
 * socket lives, holding the request (and its database work) open. 30 s lets a 25 MB upload through a
 * slow link; three attempts is the SDK's own default, written down so it is not lost.
 */
export const BLOB_STORE_LIMITS: BlobStoreLimits = { connectMs: 3_000, requestMs: 30_000, idleMs: 30_000, maxAttempts: 3 };

export function blobStoreOptions(config: Pick<Config, 'S3_BUCKET' | 'AWS_REGION' | 'AWS_ENDPOINT_URL' | 'NODE_ENV'>): BlobStoreOptions {
  return {
    bucket: config.S3_BUCKET,
    region: config.AWS_REGION,
    endpoint: config.AWS_ENDPOINT_URL,
    createBucket: config.NODE_ENV !== 'production',
  };
}

export interface StoredObject {
  size: number;
  contentType: string | null;
}

export interface BlobStore {
  readonly bucket: string;
  put(key: string, body: Buffer, contentType: string): Promise<void>;
  /** Uploads a file of `size` bytes as it is read from disk, never whole in memory (raw inbound mail). */
  putFile(key: string, path: string, size: number, contentType: string): Promise<void>;
  /** The object's bytes, or null when there is none; null also when it is larger than `maxBytes`. */
  get(key: string, maxBytes: number): Promise<Buffer | null>;
  head(key: string): Promise<StoredObject | null>;
  /**
   * The object's bytes from `fromByte` to its end, as a stream (a ranged GET: an import resumes mid-file
   * without reading what it already wrote), or null when there is no object. From the end on, it is empty.
   */
  stream(key: string, fromByte: number): Promise<Readable | null>;
  /** Idempotent: deleting a missing object succeeds. */
  delete(key: string): Promise<void>;
  /** A URL to PUT exactly `size` bytes of `contentType` to; both headers are part of the signature. */
  presignPut(key: string, file: { contentType: string; size: number }, expiresIn: number): Promise<string>;
  presignGet(key: string, download: { contentType: string; disposition: string }, expiresIn: number): Promise<string>;
  ensureBucket(): Promise<void>;
  close(): void;
}

const isMissing = (error: unknown) =>
  error instanceof S3ServiceException && (error.$metadata.httpStatusCode === 404 || error.name === 'NoSuchKey' || error.name === 'NotFound');

/** One bucket of the store as its calls see it: the client, the bucket, and whether it is known to exist yet. */
export interface BlobBucket {
  client: S3Client;
  options: BlobStoreOptions;
  limits: BlobStoreLimits;
  /** Set by the first ensureBucket of the process; cleared when creating the bucket failed. */
  ready: Promise<void> | null;
}

export function s3ClientOf(options: BlobStoreOptions, limits: BlobStoreLimits): S3Client {
  return new S3Client({
    region: options.region,
    endpoint: options.endpoint,
    maxAttempts: limits.maxAttempts,
    // Handler options (the SDK builds its NodeHttpHandler from them). A request timeout only warns unless told to throw.
    requestHandler: {
      connectionTimeout: limits.connectMs,
      requestTimeout: limits.requestMs,
      throwOnRequestTimeout: true,
      socketTimeout: limits.idleMs,
    },
    // Stand-ins and most S3-compatible services answer only path-style URLs; AWS itself takes both.
    forcePathStyle: options.endpoint !== undefined,
    // Checksums only where S3 requires them: a presigned PUT must not pin the checksum of an empty body.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    // Without a logger the SDK writes to the console that a failed streaming upload cannot be retried;
    // putBlobFile retries it itself, and its callers log what finally fails.
    logger: SILENT_SDK_LOGGER,
  });
}

const SILENT_SDK_LOGGER = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

export async function createBucketIfMissing({ client, options }: BlobBucket): Promise<void> {
  const Bucket = options.bucket;
  try {
    await client.send(new HeadBucketCommand({ Bucket }));
    return;
  } catch (error) {
    if (!isMissing(error)) throw error;
  }
  const input: CreateBucketCommandInput = { Bucket };
  // us-east-1 is the one region that refuses an explicit location constraint.
  if (options.region !== 'us-east-1') input.CreateBucketConfiguration = { LocationConstraint: options.region as BucketLocationConstraint };
  try {
    await client.send(new CreateBucketCommand(input));
  } catch (error) {
    // Another process created it first.
    if (!(error instanceof S3ServiceException && error.name === 'BucketAlreadyOwnedByYou')) throw error;
  }
}

/** Once per process when creation is on; a failure is not remembered, so the next call tries again. */
export function ensureBucket(bucket: BlobBucket): Promise<void> {
  if (!bucket.options.createBucket) return Promise.resolve();
  bucket.ready ??= createBucketIfMissing(bucket).catch((error: unknown) => {
    bucket.ready = null;
    throw error;
  });
  return bucket.ready;
}

export async function putBlob(bucket: BlobBucket, key: string, body: Buffer, contentType: string): Promise<void> {
  await ensureBucket(bucket);
  await bucket.client.send(new PutObjectCommand({ Bucket: bucket.options.bucket, Key: key, Body: body, ContentType: contentType, ContentLength: body.length }));
}

export async function putBlobFile(bucket: BlobBucket, key: string, path: string, size: number, contentType: string): Promise<void> {
  await ensureBucket(bucket);
  // The SDK cannot retry a stream it has consumed: each attempt reads the file again.
  for (let attempt = 1; ; attempt += 1) {
    try {
      await bucket.client.send(new PutObjectCommand({ Bucket: bucket.options.bucket, Key: key, Body: createReadStream(path), ContentType: contentType, ContentLength: size }));
      return;
    } catch (error) {
      const refused = error instanceof S3ServiceException && (error.$metadata.httpStatusCode ?? 500) < 500 && error.name !== 'SlowDown';
      if (refused || attempt >= bucket.limits.maxAttempts) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100 * 2 ** attempt));
    }
  }
}

export async function getBlob(bucket: BlobBucket, key: string, maxBytes: number): Promise<Buffer | null> {
  await ensureBucket(bucket);
  try {
    const object = await bucket.client.send(new GetObjectCommand({ Bucket: bucket.options.bucket, Key: key }));
    if (!object.Body) return null;
    if ((object.ContentLength ?? 0) > maxBytes) {
      object.Body.transformToWebStream().cancel().catch(() => undefined);
      return null;
    }
    return Buffer.from(await object.Body.transformToByteArray());
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

export async function streamBlob(bucket: BlobBucket, key: string, fromByte: number): Promise<Readable | null> {
  await ensureBucket(bucket);
  try {
    const object = await bucket.client.send(new GetObjectCommand({ Bucket: bucket.options.bucket, Key: key, ...(fromByte > 0 && { Range: `bytes=${fromByte}-` }) }));
    return (object.Body as Readable | undefined) ?? null;
  } catch (error) {
    if (isMissing(error)) return null;
    // A range starting at the end of the object (a file with nothing after its header): nothing left to read.
    if (error instanceof S3ServiceException && error.$metadata.httpStatusCode === 416) return Readable.from([]);
    throw error;
  }
}

export async function headBlob(bucket: BlobBucket, key: string): Promise<StoredObject | null> {
  await ensureBucket(bucket);
  try {
    const head = await bucket.client.send(new HeadObjectCommand({ Bucket: bucket.options.bucket, Key: key }));
    return { size: head.ContentLength ?? 0, contentType: head.ContentType ?? null };
  } catch (error) {
    if (isMissing(error)) return null;
    throw error;
  }
}

export async function deleteBlob(bucket: BlobBucket, key: string): Promise<void> {
  await ensureBucket(bucket);
  await bucket.client.send(new DeleteObjectCommand({ Bucket: bucket.options.bucket, Key: key }));
}

export async function presignBlobPut(bucket: BlobBucket, key: string, file: { contentType: string; size: number }, expiresIn: number): Promise<string> {
  await ensureBucket(bucket);
  const command = new PutObjectCommand({ Bucket: bucket.options.bucket, Key: key, ContentType: file.contentType, ContentLength: file.size });
  // Content-Length is signed by default; Content-Type only when named, and then the PUT must send it.
  return getSignedUrl(bucket.client, command, { expiresIn, signableHeaders: new Set(['content-type']) });
}

export async function presignBlobGet(bucket: BlobBucket, key: string, download: { contentType: string; disposition: string }, expiresIn: number): Promise<string> {
  await ensureBucket(bucket);
  const command = new GetObjectCommand({
    Bucket: bucket.options.bucket,
    Key: key,
    ResponseContentType: download.contentType,
    ResponseContentDisposition: download.disposition,
  });
  return getSignedUrl(bucket.client, command, { expiresIn });
}

export function createBlobStore(options: BlobStoreOptions): BlobStore {
  const limits = { ...BLOB_STORE_LIMITS, ...options.limits };
  const bucket: BlobBucket = { client: s3ClientOf(options, limits), options, limits, ready: null };
  return {
    bucket: options.bucket,
    ensureBucket: () => ensureBucket(bucket),
    put: (key, body, contentType) => putBlob(bucket, key, body, contentType),
    putFile: (key, path, size, contentType) => putBlobFile(bucket, key, path, size, contentType),
    get: (key, maxBytes) => getBlob(bucket, key, maxBytes),
    stream: (key, fromByte) => streamBlob(bucket, key, fromByte),
    head: (key) => headBlob(bucket, key),
    delete: (key) => deleteBlob(bucket, key),
    presignPut: (key, file, expiresIn) => presignBlobPut(bucket, key, file, expiresIn),
    presignGet: (key, download, expiresIn) => presignBlobGet(bucket, key, download, expiresIn),
    close: () => bucket.client.destroy(),
  };
}
