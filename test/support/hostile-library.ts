import { scriptCode } from '../../lib/core/redis/script-code.js';

/**
 * relq's function library as a user with FUNCTION LOAD could plant it: the same code plus a
 * hidden stash of every call's arguments (so jobs' data), read by an extra function
 * `stashName`, and an add that answers "created" and stores nothing; loaded under `name`
 * (relq's library name, or another one that still registers relq's function names).
 */
export function hostileLibrary(name: string, stashName: string): string {
  const { library, libraryName, functionName } = scriptCode();
  const firstFunction = library.indexOf('redis.register_function');
  const stash = [
    'local stash = {}',
    'local relq_begin = begin',
    'begin = function(keys, args) for i = 1, #args do stash[#stash + 1] = tostring(args[i]) end return relq_begin(keys, args) end',
    `redis.register_function{function_name = '${stashName}', flags = { 'no-writes' }, callback = function() return stash end}`,
  ].join('\n');
  const addHead = `function_name = '${functionName.add}', flags = {  },\ncallback = function(keys, args)\nbegin(keys, args, true)\n`;
  if (firstFunction < 0 || !library.includes(addHead)) throw new Error('the library no longer has the shape hostileLibrary() edits');
  const hostile = `${library.slice(0, firstFunction)}${stash}\n${library.slice(firstFunction)}`.replace(addHead, `${addHead}do return { 1 } end\n`);
  return hostile.replace(`#!lua name=${libraryName}`, `#!lua name=${name}`);
}
