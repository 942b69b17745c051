/** Inputs of the backups of a server. */
import { z } from 'zod';
import { ignorePatternProblem } from '../shared/ignore-patterns.js';
import { displayName, plainText } from './common.js';

export const createBackupInput = z.object({
  name: displayName(100).optional().meta({ description: 'Default: "Backup" and the date and time.' }),
  ignored: z
    .array(
      plainText(1024).superRefine((p, ctx) => {
        const problem = ignorePatternProblem(p);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      }),
      { message: 'must be a list of patterns' },
    )
    .max(1000, 'must hold at most 1000 patterns')
    .optional()
    .meta({ description: 'gitignore-style patterns of what to leave out; absent or empty: the lines of `.hostpanelignore` at the server\'s root, if there is one.', example: ['logs/', '*.tmp'] }),
  locked: z.boolean({ message: 'must be true or false' }).optional().meta({ description: 'Lock it at once (a locked backup cannot be deleted).' }),
});

export const restoreBackupInput = z.object({
  truncate: z.boolean({ message: 'must be true or false' }).optional().meta({ description: 'Also delete the files the backup does not have (default false: they stay).' }),
});
