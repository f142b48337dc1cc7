/** Which library computes the keys: `libsecp256k1` or `openssl`. */
export declare const publicKeyImplementation: 'libsecp256k1' | 'openssl';
/** The 65-byte uncompressed public key (0x04 prefix) of a 32-byte private key. */
export declare function uncompressedPublicKey(privateKey: Uint8Array): Buffer;
