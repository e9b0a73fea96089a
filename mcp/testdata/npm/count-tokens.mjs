// How many tokens real tokenizers make of texts, for agmem's test of the bound on its
// MCP server's answers: the texts come as a JSON array of strings on stdin, and a JSON
// array of their counts, the most of OpenAI's cl100k_base and o200k_base, goes to
// stdout.
//
//   node count-tokens.mjs < texts.json
//
// Each text is encoded in pieces of at most 256 characters: js-tiktoken takes time
// that grows as the square of a run with no space in it (a line of Chinese or emoji),
// and a piece never has fewer tokens than it would have inside the whole.
import { getEncoding } from "js-tiktoken";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const texts = JSON.parse(Buffer.concat(chunks).toString("utf8"));
const encodings = ["cl100k_base", "o200k_base"].map((name) => getEncoding(name));

const count = (encoding, text) => {
  let n = 0;
  for (let i = 0; i < text.length; ) {
    let j = Math.min(text.length, i + 256);
    const c = text.charCodeAt(j - 1);
    if (j < text.length && c >= 0xd800 && c < 0xdc00) j--; // not between a surrogate pair
    n += encoding.encode(text.slice(i, j)).length;
    i = j;
  }
  return n;
};
console.log(JSON.stringify(texts.map((t) => Math.max(...encodings.map((e) => count(e, t))))));
