import 'reflect-metadata';

// Tests are quiet unless LOG_LEVEL is set explicitly.
process.env.LOG_LEVEL ??= 'silent';
