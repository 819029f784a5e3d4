// RFC 8785 (JSON Canonicalization Scheme): the RFC's own examples, byte for byte.
import { canonicalJson, compareUtf16 } from '../src/index.js';

describe('canonical JSON is RFC 8785', () => {
  it('section 3.2.2: the sample input canonicalizes to the sample output', () => {
    const input = '{\n  "numbers": [333333333.33333329, 1E30, 4.50,\n              2e-3, 0.000000000000000000000000001],\n  "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/",\n  "literals": [null, true, false]\n}';
    expect(canonicalJson(JSON.parse(input))).toBe('{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}');
  });

  it('section 3.2.3: members sorted by UTF-16 code units, and the UTF-8 bytes of section 3.2.4', () => {
    const input = '{"\\u20ac":"Euro Sign","\\r":"Carriage Return","\\ufb33":"Hebrew Letter Dalet With Dagesh","1":"One","\\ud83d\\ude00":"Emoji: Grinning Face","\\u0080":"Control","\\u00f6":"Latin Small Letter O With Diaeresis"}';
    const out = canonicalJson(JSON.parse(input));
    const keys = [...out.matchAll(/"((?:[^"\\]|\\.)*)":/g)].map((m) => JSON.parse(`"${m[1]}"`) as string);
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
    const hex = `7b 22 5c 72 22 3a 22 43 61 72 72 69 61 67 65 20 52 65 74 75 72
      6e 22 2c 22 31 22 3a 22 4f 6e 65 22 2c 22 c2 80 22 3a 22 43 6f
      6e 74 72 6f 6c 22 2c 22 c3 b6 22 3a 22 4c 61 74 69 6e 20 53 6d
      61 6c 6c 20 4c 65 74 74 65 72 20 4f 20 57 69 74 68 20 44 69 61
      65 72 65 73 69 73 22 2c 22 e2 82 ac 22 3a 22 45 75 72 6f 20 53
      69 67 6e 22 2c 22 f0 9f 98 80 22 3a 22 45 6d 6f 6a 69 3a 20 47
      72 69 6e 6e 69 6e 67 20 46 61 63 65 22 2c 22 ef ac b3 22 3a 22
      48 65 62 72 65 77 20 4c 65 74 74 65 72 20 44 61 6c 65 74 20 57
      69 74 68 20 44 61 67 65 73 68 22 7d`.replace(/\s+/g, '');
    expect(Buffer.from(out, 'utf8').toString('hex')).toBe(hex);
    // Code-point order would put U+1F600 after U+FB33.
    expect(compareUtf16('\ud83d\ude00', '\ufb33')).toBeLessThan(0);
  });

  it('appendix B: numbers from their IEEE-754 bits', () => {
    const cases: [string, string | null][] = [
      ['0000000000000000', '0'],
      ['8000000000000000', '0'],
      ['0000000000000001', '5e-324'],
      ['8000000000000001', '-5e-324'],
      ['7fefffffffffffff', '1.7976931348623157e+308'],
      ['ffefffffffffffff', '-1.7976931348623157e+308'],
      ['4340000000000000', '9007199254740992'],
      ['c340000000000000', '-9007199254740992'],
      ['4430000000000000', '295147905179352830000'],
      ['7fffffffffffffff', null],
      ['7ff0000000000000', null],
      ['44b52d02c7e14af5', '9.999999999999997e+22'],
      ['44b52d02c7e14af6', '1e+23'],
      ['44b52d02c7e14af7', '1.0000000000000001e+23'],
      ['444b1ae4d6e2ef4e', '999999999999999700000'],
      ['444b1ae4d6e2ef4f', '999999999999999900000'],
      ['444b1ae4d6e2ef50', '1e+21'],
      ['3eb0c6f7a0b5ed8c', '9.999999999999997e-7'],
      ['3eb0c6f7a0b5ed8d', '0.000001'],
      ['41b3de4355555553', '333333333.3333332'],
      ['41b3de4355555554', '333333333.33333325'],
      ['41b3de4355555555', '333333333.3333333'],
      ['41b3de4355555556', '333333333.3333334'],
      ['41b3de4355555557', '333333333.33333343'],
      ['becbf647612f3696', '-0.0000033333333333333333'],
      ['43143ff3c1cb0959', '1424953923781206.2'],
    ];
    for (const [bits, expected] of cases) {
      const value = Buffer.from(bits, 'hex').readDoubleBE(0);
      if (expected === null) expect(() => canonicalJson(value)).toThrow(TypeError);
      else expect([bits, canonicalJson(value)]).toEqual([bits, expected]);
    }
  });

  it('escapes strings as section 3.2.2.2 says, and refuses lone surrogates', () => {
    expect(canonicalJson('\u0000\u0008\u0009\u000a\u000b\u000c\u000d\u001f"\\/\u007f\u2028é😀')).toBe('"\\u0000\\b\\t\\n\\u000b\\f\\r\\u001f\\"\\\\/\u007f\u2028é😀"');
    expect(() => canonicalJson('a\ud800')).toThrow(/lone surrogate/);
    expect(() => canonicalJson({ ['\udc00']: 1 })).toThrow(/lone surrogate/);
    expect(() => canonicalJson('\ude00\ud83d')).toThrow(/lone surrogate/);
  });
});
