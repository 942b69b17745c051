import { z } from 'zod';
import { displayName, email, password, plainText } from './common.js';

export const signupInput = z.object({ email, password, name: displayName(100) });
export const signinInput = z.object({
  email: plainText(254),
  password: z.string({ message: 'must be a string' }).max(1024, 'must be at most 1024 characters'),
});
export const updateMeInput = z
  .object({
    name: displayName(100).optional(),
    email: email.optional(),
    password: password.optional(),
    currentPassword: z.string({ message: 'must be a string' }).max(1024).meta({ description: 'Required with `password` and with an `email` different from the current one (422 `fields.currentPassword` when missing or wrong); changing the password ends the user\'s other sessions.' }).optional(),
  })
  .superRefine((v, ctx) => {
    if (v.password !== undefined && !v.currentPassword) {
      ctx.addIssue({ code: 'custom', path: ['currentPassword'], message: 'is required to change the password' });
    }
  });
export const createApiTokenInput = z.object({
  name: displayName(100),
  /** Optional lifetime in days (1..3650); no expiry when absent. */
  expiresInDays: z.number({ message: 'must be an integer' }).int('must be an integer').min(1, 'must be at least 1').max(3650, 'must be at most 3650').meta({ description: 'Lifetime in days; the token never expires when absent.' }).optional(),
});
