/**
 * A GBNF grammar for `format: "json"` with every free-form part bounded: strings up to `maxString`
 * characters, at most 8 members per object/array, nesting at most 3 levels, short numbers and whitespace.
 * Used only for models that ask for it (the tiny models' `svc.nudge.json_string_max_length`): their random
 * weights would otherwise never close a string. Output is always a JSON object, as with Ollama.
 */
export function boundedJsonGrammar(maxString: number): string {
  const n = Math.max(1, Math.floor(maxString))
  return [
    'root ::= obj1',
    'obj1 ::= "{" ws ( str ":" ws val2 ( "," ws str ":" ws val2 ){0,7} )? "}" ws',
    'val2 ::= obj2 | arr2 | scalar',
    'obj2 ::= "{" ws ( str ":" ws scalar ( "," ws str ":" ws scalar ){0,7} )? "}" ws',
    'arr2 ::= "[" ws ( scalar ( "," ws scalar ){0,7} )? "]" ws',
    'scalar ::= str | num | ( "true" | "false" | "null" ) ws',
    `str ::= "\\"" ( [^"\\\\\\x7F\\x00-\\x1F] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} ) ){0,${n}} "\\"" ws`,
    'num ::= "-"? ( [0-9] | [1-9] [0-9]{0,15} ) ( "." [0-9]{1,8} )? ws',
    'ws ::= [ \\t\\n]{0,2}',
  ].join('\n')
}
