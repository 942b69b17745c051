/**
 * The thread that edits configuration files (editor.ts starts it): it says it is ready once its
 * parsers are loaded, then answers each job with the new text, or the reason it was not edited.
 */
import { parentPort } from 'node:worker_threads';
import { editConfig } from './edit';
import { ConfigParseError } from './errors';
import type { EditAnswer, EditJob } from './editor';

const port = parentPort!;

port.on('message', ({ parser, text, entries }: EditJob) => {
  let answer: EditAnswer;
  try {
    answer = { text: editConfig(parser, text, entries) };
  } catch (err) {
    answer = { error: (err as Error).message, unparsable: err instanceof ConfigParseError };
  }
  port.postMessage(answer);
});
port.postMessage('ready');
