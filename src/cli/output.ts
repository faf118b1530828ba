/**
 * Where a reading command's output goes as it is made: stdout, or a file (`-o`) written owner-only like the logs
 * it comes from. Text is gathered into chunks and each write waits for the stream to drain, so a view of a log
 * of any size never piles up in memory behind a slow pipe.
 */
import type { WriteStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { once } from 'node:events';
import { McptapError } from '../types.js';

const CHUNK_CHARS = 64 * 1024;

export class Output {
  private buffer: string[] = [];
  private chars = 0;
  /** Characters written so far. */
  written = 0;

  private constructor(private readonly stream: NodeJS.WritableStream, private readonly file?: WriteStream) {}

  /** Output to `file` (created 0600, an existing one narrowed to 0600), or to stdout without one. */
  static async to(file: string | undefined): Promise<Output> {
    if (file === undefined) return new Output(process.stdout);
    const handle = await open(file, 'w', 0o600).catch((error: NodeJS.ErrnoException) => {
      throw new McptapError('CANNOT_WRITE', `cannot write ${file} (${error.code ?? error.message}). Choose a file in a folder that exists and that you can write to.`);
    });
    await handle.chmod(0o600);
    const stream = handle.createWriteStream();
    return new Output(stream, stream);
  }

  /** Add text; waits only when a chunk is full and the stream is behind. */
  async write(text: string): Promise<void> {
    this.buffer.push(text);
    this.chars += text.length;
    if (this.chars >= CHUNK_CHARS) await this.flush();
  }

  /** A line: the text and a newline. */
  line(text: string): Promise<void> {
    return this.write(`${text}\n`);
  }

  async flush(): Promise<void> {
    if (this.chars === 0) return;
    const text = this.buffer.join('');
    this.buffer = [];
    this.written += this.chars;
    this.chars = 0;
    if (!this.stream.write(text)) await once(this.stream, 'drain');
  }

  /** Write what is left; close the file, if any. */
  async close(): Promise<void> {
    await this.flush();
    if (this.file) {
      this.file.end();
      await once(this.file, 'close');
    }
  }
}
