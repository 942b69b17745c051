/** Inputs of a server's startup variables (PUT /servers/:id/startup). */
import { z } from 'zod';
import { variablesInput } from './servers.js';

export const updateStartupInput = z.object({
  variables: variablesInput.meta({
    description: 'New values of user-editable variables, by key. Variables not named keep their values; `{}` changes nothing.',
    example: { MAX_PLAYERS: '40' },
  }),
});
