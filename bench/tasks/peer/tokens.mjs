// Token counter for bench/tasks: reads one JSON string per line on stdin and
// writes its o200k_base token count (npm gpt-tokenizer) per line on stdout.
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";
import { createInterface } from "node:readline";

const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
for await (const line of rl) {
  process.stdout.write(String(countTokens(JSON.parse(line))) + "\n");
}
