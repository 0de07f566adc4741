import { describe, expect, it } from 'vitest';
import { choseWasmTiering } from '../../src/cli/wasm-tiering.js';

describe('choseWasmTiering', () => {
  it('sees a choice of wasm tiering in node options or NODE_OPTIONS', () => {
    expect(choseWasmTiering(['--liftoff-only'], undefined)).toBe(true);
    expect(choseWasmTiering([], '--max-old-space-size=4096 --wasm-tiering-budget=5')).toBe(true);
    expect(choseWasmTiering(['--no-wasm-dynamic-tiering'], '')).toBe(true);
    expect(choseWasmTiering(['--wasm_tier_up'], undefined)).toBe(true);
    expect(choseWasmTiering(['--no-liftoff'], undefined)).toBe(true);
  });

  it('leaves other options alone', () => {
    expect(choseWasmTiering([], undefined)).toBe(false);
    expect(choseWasmTiering(['--enable-source-maps', '--import', 'tsx'], '--max-old-space-size=4096')).toBe(false);
    expect(choseWasmTiering(['--wasm-lazy-compilation'], undefined)).toBe(false);
  });
});
