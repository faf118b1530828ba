/**
 * The messages of a WebSocket connection through the HTTP tap, decoded from a copy of each direction's raw
 * frames with ws's own frame parser (Receiver, with permessage-deflate when the handshake agreed on it) and handed
 * to an McpSession (channel `mcp-ws`), one per connection. Gives up quietly (one warning) on a frame it cannot
 * decode; the traffic is never touched here.
 */
import * as wsModule from 'ws';
import { performance } from 'node:perf_hooks';
import type { HttpObserver, McpSessionEntry } from './http-exchange.js';
import { LEVEL } from '../log/schema.js';

// ws exports its frame parser and extension helpers at run time, but its type declarations leave them out.
interface ReceiverLike {
  write(chunk: Buffer, callback: (error?: Error | null) => void): boolean;
  on(event: 'message', listener: (data: Buffer | Buffer[], isBinary: boolean) => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
}
const ws = wsModule as unknown as {
  Receiver: new (options: Record<string, unknown>) => ReceiverLike;
  PerMessageDeflate: (new (options: Record<string, unknown>) => { accept(offers: unknown[]): unknown }) & { extensionName: string };
  extension: { parse(header: string): Record<string, unknown[]> };
};

/** One direction's raw bytes, as forwarded at `time`. */
interface PassedChunk {
  dir: 'c2s' | 's2c';
  chunk: Buffer;
  time: number;
  mono: number;
}

/**
 * One upgraded connection: raw bytes of either direction in, MCP records out.
 *
 * The two directions are decoded one chunk at a time, in the order the chunks passed. A compressed message is
 * inflated asynchronously, and the other direction's decoder, fed meanwhile, let a small answer overtake the
 * large request it answers: the response was logged first and matched no request.
 */
export class WebSocketSession {
  private readonly entry: McpSessionEntry;
  private readonly taps: Record<'c2s' | 's2c', MessageTap>;
  private ended = false;
  private skipping = false;
  /** Chunks waiting for the one being decoded. */
  private readonly waiting: PassedChunk[] = [];
  private decoding = false;
  /** The connection closed while chunks were still waiting: its end comes after them. */
  private endAt: { time: number; mono: number } | undefined;

  constructor(
    private readonly observer: HttpObserver,
    exchangeId: string,
    extensionsHeader: string | string[] | undefined,
  ) {
    this.entry = observer.open('mcp-ws');
    this.taps = {
      c2s: messageTap(this.entry, exchangeId, 'c2s', extensionsHeader, observer),
      s2c: messageTap(this.entry, exchangeId, 's2c', extensionsHeader, observer),
    };
  }

  /** Raw bytes of one direction, as forwarded at `time`. */
  data(dir: 'c2s' | 's2c', chunk: Buffer, time: number, mono: number): void {
    if (this.skipping) return;
    this.waiting.push({ dir, chunk, time, mono });
    this.decodeNext();
  }

  /** Hand the next waiting chunk to its direction's decoder, once the one before is decoded to the end. */
  private decodeNext(): void {
    if (this.decoding) return;
    const next = this.waiting.shift();
    if (!next) {
      if (this.endAt) this.finish(this.endAt.time, this.endAt.mono);
      return;
    }
    this.decoding = true;
    this.taps[next.dir].write(next.chunk, next.time, next.mono, () => {
      this.decoding = false;
      this.decodeNext();
    });
  }

  /**
   * Bytes passed that inspection never saw (it had fallen behind): the frames after them cannot be found again,
   * so the connection's messages are no longer decoded, and a warning says so once.
   */
  skipped(time: number): void {
    if (this.skipping) return;
    this.skipping = true;
    this.observer.sink.write({
      time,
      channel: 'mcp-ws',
      session: this.entry.session,
      kind: 'lifecycle',
      event: 'warning',
      level: LEVEL.warn,
      msg: 'mcptap fell behind the traffic: this WebSocket connection is relayed in full, but its messages are no longer logged.',
    });
  }

  /** Either side closed: the session ends (its unanswered requests become `pending`) once its chunks are decoded. */
  end(time: number, mono: number): void {
    if (this.endAt) return;
    this.endAt = { time, mono };
    if (!this.decoding && this.waiting.length === 0) this.finish(time, mono);
  }

  private finish(time: number, mono: number): void {
    if (this.ended) return;
    this.ended = true;
    this.observer.endSession(this.entry, time, mono);
  }
}

interface MessageTap {
  /** Decode `chunk`; `decoded` is called once every message it completes has been handed on. */
  write(chunk: Buffer, time: number, mono: number, decoded: () => void): void;
}

/** Decode one direction's frames into messages for the session. */
function messageTap(entry: McpSessionEntry, exchangeId: string, dir: 'c2s' | 's2c', extensionsHeader: string | string[] | undefined, observer: HttpObserver): MessageTap {
  // Client frames are masked and parsed as a server would; server frames as a client would.
  const isServer = dir === 'c2s';
  const extensions: Record<string, unknown> = {};
  const header = Array.isArray(extensionsHeader) ? extensionsHeader.join(', ') : extensionsHeader;
  let broken = false;
  try {
    if (header) {
      const offers = ws.extension.parse(header);
      if (offers['permessage-deflate']) {
        const pmd = new ws.PerMessageDeflate({ isServer, maxPayload: 0 });
        pmd.accept(offers['permessage-deflate']);
        extensions[ws.PerMessageDeflate.extensionName] = pmd;
      }
    }
  } catch {
    broken = true;
  }
  const receiver = new ws.Receiver({ isServer, extensions, binaryType: 'nodebuffer', maxPayload: 0, skipUTF8Validation: true });
  // A message completed by a chunk is stamped with that chunk's time. (An uncompressed message is emitted inside
  // write(); a compressed one after inflating, and no later chunk is written before then: see WebSocketSession.)
  let lastTime = Date.now();
  let lastMono = performance.now();
  receiver.on('message', (data: Buffer | Buffer[], isBinary: boolean) => {
    const bytes = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    const time = lastTime;
    const mono = lastMono;
    if (isBinary) {
      observer.sink.write({
        time,
        channel: 'mcp-ws',
        session: entry.session,
        kind: 'invalid',
        dir,
        reason: 'a binary WebSocket message',
        bytes: bytes.length,
        raw: bytes.subarray(0, 4096).toString('base64'),
        rawEncoding: 'base64',
        exchange: exchangeId,
        ...(bytes.length > 4096 ? { truncated: true } : {}),
        msg: `${dir === 'c2s' ? 'Client' : 'Server'} sends a binary WebSocket message of ${bytes.length} bytes (MCP messages are text).`,
      });
      return;
    }
    entry.mcp.observe({ dir, bytes, size: bytes.length, truncated: false, time, mono }, { exchange: exchangeId });
  });
  receiver.on('error', (error: Error) => {
    if (broken) return;
    broken = true;
    observer.sink.write({
      time: Date.now(),
      channel: 'mcp-ws',
      session: entry.session,
      kind: 'lifecycle',
      event: 'warning',
      level: LEVEL.warn,
      msg: `mcptap could not decode the ${dir === 'c2s' ? "client's" : "server's"} WebSocket frames (${error.message}); the traffic passes through unchanged but its messages are no longer logged.`,
    });
  });
  return {
    write(chunk, time, mono, decoded) {
      if (broken) {
        decoded();
        return;
      }
      lastTime = time;
      lastMono = mono;
      // The callback comes once the chunk is parsed, a compressed message it ends inflated and emitted included.
      receiver.write(chunk, () => decoded());
    },
  };
}
