/** What an egg import reports: warnings for what is not mapped, an error for what cannot be. */

export interface ImportWarning {
  /** the egg's field, e.g. `config.files`, `variables.2.rules` */
  field: string;
  message: string;
}

/** Thrown for an egg that passes the schema but cannot be mapped: `fields` as in a 422. */
export class EggError extends Error {
  constructor(readonly fields: Record<string, string>) {
    super('The egg cannot be imported.');
  }
}
