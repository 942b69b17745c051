/**
 * What a file takes on a server's disk as its disk limit counts it (environment/proc.ts measures the
 * same way): its contents in whole 4 KiB blocks, and at least one block for any file, folder or link
 * (a million empty files take space too).
 */
export const ENTRY_BYTES = 4096;

/** The disk a file of `size` bytes takes, as the limit counts it. */
export const footprint = (size: number): number => Math.max(ENTRY_BYTES, Math.ceil(size / ENTRY_BYTES) * ENTRY_BYTES);
