// Worker thread of the address pool (address-pool.ts): secp256k1 public keys and their Ethereum addresses,
// the CPU-heavy half of creating a wallet, off the server's event loop. Plain JavaScript on purpose, so it
// starts under any loader (tsx, vitest, plain node).
import { parentPort } from 'node:worker_threads';
import { keccak256 } from 'viem';
import { uncompressedPublicKey } from './public-key.mjs';

parentPort.on('message', (message) => {
  const keys = Buffer.from(message.keys);
  const addresses = [];
  for (let offset = 0; offset < keys.length; offset += 32) {
    const publicKey = uncompressedPublicKey(keys.subarray(offset, offset + 32));
    addresses.push(`0x${keccak256(publicKey.subarray(1)).slice(-40)}`);
  }
  parentPort.postMessage({ id: message.id, addresses });
});
