/**
 * V8's own answer to "does this object keep a shared map (fast properties), or a dictionary of its own?" (issue 31: a
 * dictionary costs a compact record about 430 bytes). The natives flag only affects code parsed after it is set, so
 * the check is compiled here; and it is tried on an object known to be a dictionary, so a V8 that ignored the flag
 * fails the test instead of passing it.
 */
import { setFlagsFromString } from 'node:v8';

export function fastPropertiesCheck(): (o: object) => boolean {
  setFlagsFromString('--allow-natives-syntax');
  const hasFastProperties = new Function('o', 'return %HasFastProperties(o)') as (o: object) => boolean;
  const dictionary: Record<string, number> = { a: 1, b: 2 };
  delete dictionary.a;
  if (!hasFastProperties({ a: 1 }) || hasFastProperties(dictionary)) throw new Error('%HasFastProperties does not tell fast objects from dictionaries on this V8');
  return hasFastProperties;
}
