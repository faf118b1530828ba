/**
 * HTTP bodies as the log sees them: a bounded copy (the forwarded body is never cut), and decoding of a
 * compressed copy (gzip, deflate, br) so the log holds readable text while the client gets the original bytes.
 *
 * BodyCapture is pure and synchronous. createBodyDecoder wraps zlib's streaming decoders, which hand back their
 * output asynchronously but in order; it is only ever fed the copy.
 */
import { isUtf8 } from 'node:buffer';
import zlib from 'node:zlib';

/** The kept head of a body, ready for a log record. */
export interface CapturedBody {
  /** Body text, or base64 when it is not UTF-8; absent when the body was empty or nothing was kept. */
  body?: string;
  bodyEncoding?: 'base64';
  /** Total bytes seen (decoded bytes when the copy was decoded). */
  bytes: number;
  /** True when only the head is kept. */
  truncated?: boolean;
}

const NO_BYTES = Buffer.alloc(0);

/** Keeps the first `maxBytes` of a body and counts the rest. */
export class BodyCapture {
  private readonly maxBytes: number;
  /**
   * The kept head, each piece copied in as it comes (room doubling): holding each chunk's Buffer instead kept
   * thousands of them alive through every young collection of a long stream.
   */
  private kept = NO_BYTES;
  private keptBytes = 0;
  private total = 0;
  /** The last bytes of the body (at most 256), kept once it outgrows the cap. */
  private last: Buffer | undefined;

  constructor(maxBytes: number) {
    this.maxBytes = Math.max(0, maxBytes);
  }

  /** Add the next piece of the body. */
  push(chunk: Buffer): void {
    this.total += chunk.length;
    const room = this.maxBytes - this.keptBytes;
    if (this.last !== undefined || chunk.length > room) {
      const before = this.last ?? this.head();
      this.last = Buffer.from((chunk.length >= 256 ? chunk : Buffer.concat([before, chunk])).subarray(-256));
    }
    if (room <= 0) return;
    const n = Math.min(chunk.length, room);
    const need = this.keptBytes + n;
    if (need > this.kept.length) {
      const more = Buffer.allocUnsafe(Math.min(this.maxBytes, Math.max(need, 2 * this.kept.length)));
      this.kept.copy(more, 0, 0, this.keptBytes);
      this.kept = more;
    }
    chunk.copy(this.kept, this.keptBytes, 0, n);
    this.keptBytes = need;
  }

  /** The body's last bytes (at most 256) when it outgrew the cap, else undefined (the head is the whole body). */
  tail(): Buffer | undefined {
    return this.last;
  }

  /** Total bytes pushed so far. */
  get bytes(): number {
    return this.total;
  }

  /** The kept head as one buffer. */
  head(): Buffer {
    return this.kept.subarray(0, this.keptBytes);
  }

  /** The kept head, as text when it is UTF-8 (a multi-byte character cut by the cap is dropped), else base64. */
  result(): CapturedBody {
    const out: CapturedBody = { bytes: this.total };
    const truncated = this.total > this.keptBytes;
    if (truncated) out.truncated = true;
    if (this.keptBytes === 0) return out;
    let head = this.head();
    if (truncated) head = trimPartialUtf8(head);
    if (isUtf8(head)) out.body = head.toString('utf8');
    else {
      out.body = this.head().toString('base64');
      out.bodyEncoding = 'base64';
    }
    return out;
  }
}

/** Drop the bytes of a UTF-8 character cut in half at the end of a buffer. */
export function trimPartialUtf8(buffer: Buffer): Buffer {
  // Walk back over at most 3 continuation bytes to the lead byte and check the sequence is complete.
  let i = buffer.length - 1;
  let continuation = 0;
  while (i >= 0 && continuation < 3 && (buffer[i]! & 0xc0) === 0x80) {
    i--;
    continuation++;
  }
  if (i < 0) return buffer;
  const lead = buffer[i]!;
  const need = lead >= 0xf0 ? 3 : lead >= 0xe0 ? 2 : lead >= 0xc0 ? 1 : 0;
  return need > continuation ? buffer.subarray(0, i) : buffer;
}

/** The content codings mcptap can decode for the log. */
export type ContentCoding = 'gzip' | 'deflate' | 'br';

/**
 * The coding of a Content-Encoding header mcptap can decode, `identity` for none, or undefined when it is one
 * mcptap does not know (zstd, a chain of codings): the copy is then logged as it came.
 */
export function contentCoding(header: string | string[] | undefined): ContentCoding | 'identity' | undefined {
  const value = (Array.isArray(header) ? header.join(',') : header ?? '').trim().toLowerCase();
  if (value === '' || value === 'identity') return 'identity';
  if (value === 'gzip' || value === 'x-gzip') return 'gzip';
  if (value === 'deflate') return 'deflate';
  if (value === 'br') return 'br';
  return undefined;
}

/** Decodes a compressed copy piece by piece. Output comes through `onData` in order; `onEnd` after the last. */
export interface BodyDecoder {
  push(chunk: Buffer): void;
  end(): void;
}

/**
 * A streaming decoder for the copy. A body that fails to decode (not really compressed, cut off) reports the
 * error through `onError` once and stops producing output; the forwarded bytes are unaffected.
 */
export function createBodyDecoder(
  coding: ContentCoding,
  onData: (chunk: Buffer) => void,
  onEnd: () => void,
  onError: (error: Error) => void,
): BodyDecoder {
  // Sync flush lets a partial stream (an SSE body still open) come out as soon as its bytes arrive.
  const flush = { flush: zlib.constants.Z_SYNC_FLUSH, finishFlush: zlib.constants.Z_SYNC_FLUSH };
  const stream =
    coding === 'gzip'
      ? zlib.createGunzip(flush)
      : coding === 'deflate'
        ? // "deflate" is meant to be zlib-wrapped, but some servers send raw deflate: sniff the first byte.
          undefined
        : zlib.createBrotliDecompress({ flush: zlib.constants.BROTLI_OPERATION_FLUSH, finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH });
  let inner: zlib.Gunzip | zlib.Inflate | zlib.InflateRaw | zlib.BrotliDecompress | undefined = stream;
  let failed = false;
  let ended = false;
  const attach = (s: NonNullable<typeof inner>): void => {
    s.on('data', (chunk: Buffer) => {
      if (!failed) onData(chunk);
    });
    s.on('end', () => {
      if (!failed) onEnd();
    });
    s.on('error', (error: Error) => {
      if (failed) return;
      failed = true;
      onError(error);
      onEnd();
    });
  };
  if (inner) attach(inner);
  return {
    push(chunk) {
      if (failed || ended || chunk.length === 0) return;
      if (!inner) {
        // zlib-wrapped deflate starts with a CMF byte whose low nibble is 8; anything else is raw deflate.
        inner = (chunk[0]! & 0x0f) === 8 ? zlib.createInflate(flush) : zlib.createInflateRaw(flush);
        attach(inner);
      }
      inner.write(chunk);
    },
    end() {
      if (ended) return;
      ended = true;
      if (!inner) {
        onEnd();
        return;
      }
      if (failed) return;
      inner.end();
    },
  };
}

/**
 * Decode the kept head of a compressed body in one go (request bodies: they are read whole before anything is
 * logged). A head cut at the cap decodes as far as it goes; at most `maxBytes` come out. Undefined when the
 * bytes do not decode at all.
 */
export function decodeBodyHead(coding: ContentCoding, head: Buffer, maxBytes: number): Buffer | undefined {
  const maxOutputLength = Math.max(1, maxBytes);
  try {
    if (coding === 'br') return zlib.brotliDecompressSync(head, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength });
    const options = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength };
    if (coding === 'gzip') return zlib.gunzipSync(head, options);
    return (head[0]! & 0x0f) === 8 ? zlib.inflateSync(head, options) : zlib.inflateRawSync(head, options);
  } catch (error) {
    // Output over the cap: keep what fits, as for any other body.
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') return decodeBodyHead(coding, head.subarray(0, Math.floor(head.length / 2)), maxBytes);
    return undefined;
  }
}
