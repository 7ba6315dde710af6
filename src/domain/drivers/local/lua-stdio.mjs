// The Lua host's standard streams. Lua's own io library (io.read, io.lines, io.write, print,
// io.stderr) works on C stdio, which in wasmoon ends in emscripten's virtual file system; by
// default that reads stdin in 256-byte chunks that break on a non-blocking pipe and writes
// stdout through console.log. These devices put descriptors 0, 1 and 2 of the virtual file system
// on the process's real ones, synchronously, so that a Lua driver behaves as under a native
// `lua` interpreter: a blocking read waits for the hub's next line, and a write has reached the
// pipe when it returns.
import fs from 'node:fs';

const READ_CHUNK_BYTES = 64 * 1024;
const EAGAIN_MAX_SLEEP_MS = 10;
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/** Blocks the thread: the only way to wait inside a synchronous read or write. */
function sleepSync(ms) {
  Atomics.wait(sleeper, 0, 0, ms);
}

/**
 * Writes all of `data` to `fd` before returning. A descriptor someone else made non-blocking
 * answers EAGAIN when the pipe is full: wait a little and go on. `onBrokenPipe` runs when the
 * reader is gone (EPIPE): the hub closed its end.
 */
export function writeAllSync(fd, data, onBrokenPipe) {
  let bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
  let pause = 1;
  while (bytes.length > 0) {
    try {
      const written = fs.writeSync(fd, bytes);
      bytes = bytes.subarray(written);
      pause = 1;
    } catch (err) {
      if (err.code === 'EAGAIN') {
        sleepSync(pause);
        pause = Math.min(pause * 2, EAGAIN_MAX_SLEEP_MS);
      } else if (err.code === 'EPIPE' || err.code === 'EBADF') {
        onBrokenPipe?.();
        return;
      } else {
        throw err;
      }
    }
  }
}

/**
 * The process's stdin, read synchronously and handed out one line at a time, the way a terminal
 * in canonical mode does: C stdio then never holds more than the line Lua is reading, so the
 * bytes after it stay here for whoever reads next (Lua again, or the host's dispatcher once the
 * main chunk has returned).
 */
export class StdinLines {
  #pending = Buffer.alloc(0);
  #ended = false;
  #chunk = Buffer.alloc(READ_CHUNK_BYTES);
  /** Set once the host reads stdin itself: Lua's reads then see end of input. */
  #takenBy;
  #warn;

  constructor(warn) {
    this.#warn = warn;
  }

  /** Every byte was read and handed out. */
  get exhausted() {
    return this.#ended && this.#pending.length === 0;
  }

  /** Fills `target` from `offset` with at most `length` bytes, up to the end of the next line. */
  readInto(target, offset, length) {
    if (this.#takenBy !== undefined) {
      this.#warn?.(`io.read on stdin is not available: ${this.#takenBy}; it reads as end of input`);
      this.#warn = undefined;
      return 0;
    }
    if (this.#pending.length === 0 && !this.#ended) this.#fill();
    if (this.#pending.length === 0) return 0;
    const newline = this.#pending.indexOf(10);
    const size = Math.min(length, newline === -1 ? this.#pending.length : newline + 1);
    target.set(this.#pending.subarray(0, size), offset);
    this.#pending = this.#pending.subarray(size);
    return size;
  }

  /** Hands the unread bytes to the host, which reads the rest of stdin itself from now on. */
  takeOver(reason) {
    this.#takenBy = reason;
    const rest = this.#pending;
    this.#pending = Buffer.alloc(0);
    return rest;
  }

  #fill() {
    let pause = 1;
    for (;;) {
      try {
        const size = fs.readSync(0, this.#chunk, 0, this.#chunk.length, null);
        if (size === 0) this.#ended = true;
        else this.#pending = Buffer.from(this.#chunk.subarray(0, size));
        return;
      } catch (err) {
        if (err.code === 'EAGAIN') {
          // stdin was made non-blocking by someone sharing it: poll, gently.
          sleepSync(pause);
          pause = Math.min(pause * 2, EAGAIN_MAX_SLEEP_MS);
        } else if (err.code === 'EOF') {
          // Windows reports the end of a pipe as an error.
          this.#ended = true;
          return;
        } else {
          throw err;
        }
      }
    }
  }
}

/** The member of an emscripten stream that holds its operations (the name is minified). */
function operationsKey(stream) {
  return Object.keys(stream).find((key) => {
    const value = stream[key];
    return value !== null && typeof value === 'object' && typeof value.read === 'function' && typeof value.write === 'function';
  });
}

/**
 * Replaces the operations of descriptors 0, 1 and 2 of wasmoon's file system. Must run before
 * the Lua state opens its io library. Throws when the file system does not look as expected (a
 * wasmoon upgrade), rather than silently leaving the protocol on console.log.
 */
export function installStandardStreams(fileSystem, { stdin, onBrokenPipe }) {
  const streams = fileSystem?.streams;
  const device = (operations) => ({ open() {}, close() {}, fsync() {}, ...operations });
  const writer = (fd) =>
    device({
      read: () => 0,
      write(_stream, heap, offset, length) {
        writeAllSync(fd, Buffer.from(heap.buffer, heap.byteOffset + offset, length), fd === 1 ? onBrokenPipe : undefined);
        return length;
      },
    });
  const replacements = [device({ read: (_stream, heap, offset, length) => stdin.readInto(heap, offset, length), write: () => 0 }), writer(1), writer(2)];
  replacements.forEach((operations, fd) => {
    const stream = streams?.[fd];
    const key = stream && operationsKey(stream);
    if (!key) throw new Error(`lua-host: the Lua runtime has no standard stream ${fd} to attach to (unsupported wasmoon version?)`);
    stream[key] = operations;
  });
}
