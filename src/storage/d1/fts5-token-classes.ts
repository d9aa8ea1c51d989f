// Which code points FTS5's unicode61 tokenizer (remove_diacritics 2, as migrations/0010 configures it) keeps in a
// word: read off the tokenizer itself, because its Unicode tables are SQLite's own (unassigned code points are word
// characters to it, U+0903 is not) and no JS regex property matches them. test/integration/search-tokenizer.test.ts
// checks every code point against D1 and prints this table again when the tokenizer changes.

/** What the tokenizer does with a code point: ends a word (and is dropped), ... */
export const SEPARATOR = 0;
/** ... continues a word but cannot start one (the combining diacritics it folds away), ... */
export const CONTINUES = 1;
/** ... or starts and continues a word. */
export const WORD = 2;
export type TokenClass = typeof SEPARATOR | typeof CONTINUES | typeof WORD;

/**
 * Runs over code points 0…10FFFF, comma-separated: each is the run's length in base 36 and then the class of the code
 * points that follow it (the first run, from 0, is of separators). Surrogates count as separators: D1 stores a lone
 * one as U+FFFD.
 */
export const TOKEN_CLASS_RUNS =
  "1c2,a0,72,q0,62,q0,1b2,10,72,20,12,10,32,20,12,30,12,n0,12,v0,12,cq0,42,c0,e2,50,72,10,12,10,h1,50,11,70,21,10" +
  ",11,10,91,10,71,60,41,20,11,20,1q2,50,12,80,12,50,22,10,12,320,12,3v0,82,5s0,62,150,22,40,12,10,1j2,170,22,b0," +
  "52,10,m2,20,22,170,l2,a0,42,20,12,2r0,12,10,f2,20,72,f0,22,10,e2,10,12,10,12,u0,r2,2j0,b2,1m0,92,20,42,s0,42,1" +
  "0,92,10,32,10,52,20,f2,q0,32,20,12,3p0,r2,10,42,1i0,32,10,i2,10,72,a0,42,a0,12,g0,32,1k0,12,10,72,20,22,20,32," +
  "90,12,a0,22,e0,22,60,22,50,32,1k0,12,10,52,40,22,20,32,30,12,u0,22,30,12,b0,32,1k0,12,10,82,10,32,10,32,k0,22," +
  "c0,22,f0,32,1k0,12,10,72,20,22,20,32,80,22,a0,22,c0,12,h0,12,1n0,52,30,32,10,42,90,12,r0,82,60,32,1m0,72,10,32" +
  ",10,42,70,22,b0,22,r0,12,20,22,1k0,12,10,72,10,32,10,42,70,22,b0,22,u0,22,1m0,72,10,32,10,42,90,12,a0,22,l0,12" +
  ",80,22,1y0,12,40,62,10,12,10,82,i0,32,1o0,12,20,72,40,12,70,92,a0,22,2d0,12,20,62,10,22,b0,62,1f0,v2,k0,c2,1d0" +
  ",n2,50,b2,10,102,10,f2,10,d2,280,k2,b0,62,60,42,40,32,10,32,20,72,30,42,d0,c2,10,12,a0,62,2j0,12,gx0,c2,130,a2" +
  ",2u0,12,h80,22,h0,12,q0,22,260,32,100,32,t0,52,r0,22,u0,22,1s0,z2,10,42,10,12,y0,f2,4a0,12,3a0,c2,40,c2,40,12," +
  "30,22,2y0,h2,70,22,k0,y2,n0,52,20,22,1h0,a2,10,t2,20,12,w0,72,10,62,2a0,52,1b0,h2,l0,z2,30,32,u0,d2,1k0,e2,80," +
  "42,100,k2,30,52,1q0,22,1s0,82,80,p2,40,12,40,32,5n0,132,l0,42,cd0,12,10,32,b0,32,d0,32,d0,32,d0,22,10,2t2,50,6" +
  "2,a0,52,b0,52,h0,q2,m0,x2,f0,22,10,42,10,22,a0,12,10,32,50,62,10,12,10,12,10,12,40,12,b0,22,40,52,50,42,10,12," +
  "1s0,h02,c0,132,p0,b2,290,262,m0,e82,10,392,u0,qh2,30,a2,az0,62,40,32,70,42,10,22,340,12,e0,12,2o0,272,10,c2,1w" +
  "0,q2,10,2h2,c0,5y2,q0,c2,40,52,30,p2,90,72,50,22,50,32,2h0,42,30,12,2i0,12,440,22,40,a2,w0,102,s0,v2,b0,u2,80," +
  "12,f0,w2,a0,132,f0,1r2,10,742,5340,1s2,h3k0,1j2,1j0,22,7h0,32,2n0,g2,w0,12,280,82,80,n2,90,22,2v0,22,3b0,12,30" +
  ",12,40,12,n0,92,a0,42,1m0,42,80,22,1e0,h2,90,22,g0,i2,60,32,170,a2,n0,d2,b0,12,w0,42,1b0,r2,g0,22,210,e2,c0,12" +
  ",80,22,e0,42,n0,32,10,12,1g0,12,10,32,20,22,50,22,10,12,s0,22,b0,72,30,22,6k0,b2,8pe0,1kw2,5cu0,12,a0,12,3s0,g" +
  "2,ak0,22,580,22,20,q2,60,72,90,z2,10,j2,10,42,430,12,10,f2,a0,72,q0,62,q0,b2,3e0,72,10,72,a0,72,740,32,1g0,92," +
  "1l0,h2,60,c2,1g0,1a2,bl0,12,1c0,12,w60,12,5j0,12,v0,12,5d0,32,10,22,50,42,140,32,40,12,g0,92,120,12,550,72,xs0" +
  ",32,1h0,m2,1e0,32,190,i2,1q0,32,100,e2,b0,42,1o0,32,1c0,e2,40,42,yq0,d2,2pk0,42,esd0,1a2,g0,42,j1p0,6u2,a0,132" +
  ",20,512,y0,1y2,560,2f2,oa0,12,p0,12,v0,12,p0,12,v0,12,p0,12,v0,12,p0,12,v0,12,p0,12,4ks0,22,7i0,182,40,2s2,c0," +
  "f2,20,e2,20,f2,10,f2,1c0,v2,10,1o2,40,172,230,t2,d0,172,50,92,70,22,4u0,x2,f0,62,10,1y2,30,k2,c0,112,10,52,l0," +
  "h2,f0,1r2,10,12,10,522,10,42,30,1q2,20,42,c0,o2,430,1y2,40,b2,1c0,1y2,1m0,382,gwi50,12,u0,2o2,3k0,6o2";

const starts: number[] = [];
const classes: TokenClass[] = [];
{
  let at = 0;
  starts.push(0);
  classes.push(SEPARATOR);
  for (const run of TOKEN_CLASS_RUNS.split(",")) {
    at += Number.parseInt(run.slice(0, -1), 36);
    starts.push(at);
    const value = Number(run.slice(-1));
    classes.push(value === WORD ? WORD : value === CONTINUES ? CONTINUES : SEPARATOR);
  }
}

/** The tokenizer's class of a code point (binary search over the runs). */
export function tokenClass(codePoint: number): TokenClass {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= codePoint) lo = mid;
    else hi = mid - 1;
  }
  return classes[lo]!;
}
