/**
 * Where the real Pterodactyl eggs (MIT) are: `EGGS_DIR`, else `../shared/eggs/pterodactyl` beside the
 * repository, else `/work/shared/eggs/pterodactyl` (a clean clone elsewhere on the machine). They are
 * read from there, never copied into the project. `MINIMAL_EGG` is an egg of our own for the tests
 * that only need one.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';

const CANDIDATES = [process.env.EGGS_DIR, path.resolve(__dirname, '../../../shared/eggs/pterodactyl'), '/work/shared/eggs/pterodactyl'].filter((d): d is string => !!d);

export const EGGS_DIR: string | null = CANDIDATES.find((d) => existsSync(path.join(d, 'egg-paper.json'))) ?? null;

/** A small PTDL_v2 egg: a Java game with two variables, a ready line and a stop command. */
export const MINIMAL_EGG = {
  meta: { version: 'PTDL_v2', update_url: null },
  exported_at: '2026-11-25T00:00:00+00:00',
  name: 'Minimal Java game',
  author: 'tests@example.com',
  description: 'An egg written for the tests.',
  features: null,
  docker_images: { 'Java 21': 'ghcr.io/example/java:21' },
  file_denylist: [],
  startup: 'java -Xmx{{SERVER_MEMORY}}M -jar {{SERVER_JARFILE}} --port {{SERVER_PORT}}',
  config: { files: '{}', startup: '{"done": ")! For help, type "}', logs: '{}', stop: 'stop' },
  scripts: { installation: { script: '#!/bin/bash\necho install', container: 'ghcr.io/example/installer', entrypoint: 'bash' } },
  variables: [
    { name: 'Server Jar File', description: 'The jar to run.', env_variable: 'SERVER_JARFILE', default_value: 'server.jar', user_viewable: true, user_editable: true, rules: 'required|regex:/^([\\w\\d._-]+)(\\.jar)$/', field_type: 'text' },
    { name: 'Max players', description: 'How many players.', env_variable: 'MAX_PLAYERS', default_value: '20', user_viewable: true, user_editable: false, rules: 'required|integer|between:1,100', field_type: 'text' },
  ],
};
