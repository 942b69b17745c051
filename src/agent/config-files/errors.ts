/** A configuration file that does not parse (or that the agent refuses to rewrite): it is left as it is. */
export class ConfigParseError extends Error {}
