import { Worker } from 'node:worker_threads';

/** Turns private keys into addresses somewhere other than the caller's event loop. */
export interface AddressPool {
  addressOf(privateKey: Buffer): Promise<`0x${string}`>;
  readonly workersForTests: readonly Worker[];
  close(): Promise<void>;
}

interface Waiting {
  resolve(address: `0x${string}`): void;
  reject(error: Error): void;
}

/**
 * A small pool of worker threads computing wallet addresses (secp256k1 public key + keccak256: ~0.05 ms of
 * CPU each with libsecp256k1, ~0.3 ms with OpenSSL; see public-key.mjs). Keys asked for in the same tick travel to
 * one worker in one message (a transferred buffer), so a batch of new users costs one round trip. When a
 * worker fails, the pool answers with `fallback` (the same computation in this thread) from then on: an
 * address is never lost to a pool problem.
 */
export function createAddressPool(options: {
  threads: number;
  fallback(privateKey: Buffer): `0x${string}`;
  onWorkerError?(error: Error): void;
}): AddressPool {
  const workers: { worker: Worker; inFlight: Map<number, Waiting[]> }[] = [];
  let broken = false;
  let nextId = 1;
  let turn = 0;
  let queued: { key: Buffer; waiting: Waiting }[] = [];
  let scheduled = false;

  const failAll = (error: Error) => {
    if (broken) return;
    broken = true;
    options.onWorkerError?.(error);
    for (const { worker, inFlight } of workers) {
      void worker.terminate();
      // Whatever was in flight is recomputed here.
      for (const waiting of inFlight.values()) for (const w of waiting) w.reject(error);
      inFlight.clear();
    }
  };

  for (let i = 0; i < options.threads; i++) {
    const worker = new Worker(new URL('./address-worker.mjs', import.meta.url));
    worker.unref();
    const inFlight = new Map<number, Waiting[]>();
    worker.on('message', (message: { id: number; addresses: `0x${string}`[] }) => {
      const waiting = inFlight.get(message.id);
      inFlight.delete(message.id);
      waiting?.forEach((w, index) => {
        const address = message.addresses[index];
        if (address) w.resolve(address);
        else w.reject(new Error('address worker answered short'));
      });
    });
    worker.on('error', (error) => failAll(error));
    worker.on('exit', (code) => {
      if (code !== 0) failAll(new Error(`address worker exited with code ${code}`));
    });
    workers.push({ worker, inFlight });
  }

  const flush = () => {
    scheduled = false;
    const batch = queued;
    queued = [];
    if (batch.length === 0) return;
    const slot = workers[turn++ % workers.length];
    if (broken || !slot) {
      for (const item of batch) item.waiting.resolve(options.fallback(item.key));
      return;
    }
    const keys = Buffer.concat(batch.map((item) => item.key));
    const buffer = keys.buffer.slice(keys.byteOffset, keys.byteOffset + keys.byteLength);
    const id = nextId++;
    slot.inFlight.set(
      id,
      batch.map((item) => item.waiting),
    );
    slot.worker.postMessage({ id, keys: buffer }, [buffer]);
  };

  return {
    /** The raw workers, so a test can kill one the way a crash would. */
    get workersForTests() {
      return workers.map(({ worker }) => worker);
    },
    addressOf(privateKey) {
      if (broken || workers.length === 0) return Promise.resolve(options.fallback(privateKey));
      return new Promise<`0x${string}`>((resolve) => {
        queued.push({
          key: privateKey,
          // A worker failure mid-flight is answered here, in this thread, with the same address.
          waiting: { resolve, reject: () => resolve(options.fallback(privateKey)) },
        });
        if (!scheduled) {
          scheduled = true;
          setImmediate(flush);
        }
      });
    },
    async close() {
      broken = true;
      await Promise.all(workers.map(({ worker }) => worker.terminate()));
    },
  };
}
