/**
 * REST and GraphQL answer the same: reads and refused writes of the newer features (files, backups,
 * schedules, startup, subusers, activity, SFTP, console token), each over both protocols for every
 * kind of caller (administrator, owner, subuser with every key, subuser with websocket.connect only,
 * stranger, anonymous), compared by outcome (OK, or the error code).
 */
import { createLocalDemoServer } from '../support/fixtures.js';
import { startTestPlatform, type TestPlatform } from '../support/harness.js';
import { gql } from '../graphql/gql.js';

let p: TestPlatform;
const who: Record<string, string | undefined> = {};
let serverId: string;

beforeAll(async () => {
  p = await startTestPlatform({ localAgent: true, agentPort: 0 });
  const admin = await p.admin();
  const owner = await p.newUser('Owner');
  const withKeys = await p.newUser('With');
  const without = await p.newUser('Without');
  const stranger = await p.newUser('Stranger');
  serverId = await createLocalDemoServer(p, admin.token, owner.token, 'sweep');
  const perms = (await p.request('GET', '/api/v1/permissions', { token: owner.token })).body.data.map((k: any) => k.key);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: withKeys.email, permissions: perms } })).status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/subusers`, { token: owner.token, body: { email: without.email, permissions: ['websocket.connect'] } })).status).toBe(201);
  expect((await p.request('POST', `/api/v1/servers/${serverId}/files/directory`, { token: owner.token, body: { path: 'dir' } })).status).toBe(201);
  const w = await p.request('PUT', `/api/v1/servers/${serverId}/files/contents?path=${encodeURIComponent('dir/ünï cödé.txt')}`, { token: owner.token, raw: 'hello ü\n', headers: { 'content-type': 'application/octet-stream' } });
  expect(w.status).toBe(200);
  Object.assign(who, { admin: admin.token, owner: owner.token, withKeys: withKeys.token, without: without.token, stranger: stranger.token, anon: undefined });
}, 90_000);

afterAll(async () => {
  await p?.stop();
}, 60_000);

const q = (s: string) => encodeURIComponent(s);
interface Case {
  name: string;
  rest: (id: string) => [string, string, unknown?];
  gql: string;
  vars: (id: string) => Record<string, unknown>;
}
const cases: Case[] = [
  { name: 'files /', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=/`], gql: 'query($id:ID!){files(serverId:$id,path:"/"){items{name path}}}', vars: (id) => ({ id }) },
  { name: 'files dir', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=dir`], gql: 'query($id:ID!){files(serverId:$id,path:"dir"){items{name path}}}', vars: (id) => ({ id }) },
  { name: 'files ..', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=${q('../..')}`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: '../..' }) },
  { name: 'files dir/..', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=${q('dir/..')}`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: 'dir/..' }) },
  { name: 'files empty path', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: '' }) },
  { name: 'files null path', rest: (id) => ['GET', `/api/v1/servers/${id}/files`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: null }) },
  { name: 'files missing', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=nope`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: 'nope' }) },
  { name: 'files NUL', rest: (id) => ['GET', `/api/v1/servers/${id}/files?path=a%00b`], gql: 'query($id:ID!,$p:String){files(serverId:$id,path:$p){items{name}}}', vars: (id) => ({ id, p: 'a\u0000b' }) },
  { name: 'files limit huge', rest: (id) => ['GET', `/api/v1/servers/${id}/files?limit=3000000000`], gql: 'query($id:ID!,$l:Int){files(serverId:$id,limit:$l){items{name}}}', vars: (id) => ({ id, l: 3000000000 }) },
  { name: 'files limit 0', rest: (id) => ['GET', `/api/v1/servers/${id}/files?limit=0`], gql: 'query($id:ID!,$l:Int){files(serverId:$id,limit:$l){items{name}}}', vars: (id) => ({ id, l: 0 }) },
  { name: 'files page 0', rest: (id) => ['GET', `/api/v1/servers/${id}/files?page=0`], gql: 'query($id:ID!,$l:Int){files(serverId:$id,page:$l){items{name}}}', vars: (id) => ({ id, l: 0 }) },
  { name: 'files limit 1001', rest: (id) => ['GET', `/api/v1/servers/${id}/files?limit=1001`], gql: 'query($id:ID!,$l:Int){files(serverId:$id,limit:$l){items{name}}}', vars: (id) => ({ id, l: 1001 }) },
  { name: 'contents unicode', rest: (id) => ['GET', `/api/v1/servers/${id}/files/contents?path=${q('dir/ünï cödé.txt')}`], gql: 'query($id:ID!,$p:String!){fileContents(serverId:$id,path:$p){contents}}', vars: (id) => ({ id, p: 'dir/ünï cödé.txt' }) },
  { name: 'contents ..', rest: (id) => ['GET', `/api/v1/servers/${id}/files/contents?path=${q('../../../etc/passwd')}`], gql: 'query($id:ID!,$p:String!){fileContents(serverId:$id,path:$p){contents}}', vars: (id) => ({ id, p: '../../../etc/passwd' }) },
  { name: 'contents empty', rest: (id) => ['GET', `/api/v1/servers/${id}/files/contents?path=`], gql: 'query($id:ID!,$p:String!){fileContents(serverId:$id,path:$p){contents}}', vars: (id) => ({ id, p: '' }) },
  { name: 'contents dir', rest: (id) => ['GET', `/api/v1/servers/${id}/files/contents?path=dir`], gql: 'query($id:ID!,$p:String!){fileContents(serverId:$id,path:$p){contents}}', vars: (id) => ({ id, p: 'dir' }) },
  { name: 'search empty', rest: (id) => ['GET', `/api/v1/servers/${id}/files/search?query=`], gql: 'query($id:ID!,$p:String!){fileSearch(serverId:$id,query:$p){name}}', vars: (id) => ({ id, p: '' }) },
  { name: 'search ünï', rest: (id) => ['GET', `/api/v1/servers/${id}/files/search?query=${q('ÜNÏ')}`], gql: 'query($id:ID!,$p:String!){fileSearch(serverId:$id,query:$p){name}}', vars: (id) => ({ id, p: 'ÜNÏ' }) },
  { name: 'search ..', rest: (id) => ['GET', `/api/v1/servers/${id}/files/search?query=a&path=${q('..')}`], gql: 'query($id:ID!,$p:String!){fileSearch(serverId:$id,query:"a",path:$p){name}}', vars: (id) => ({ id, p: '..' }) },
  { name: 'backups', rest: (id) => ['GET', `/api/v1/servers/${id}/backups`], gql: 'query($id:ID!){backups(serverId:$id){items{id}}}', vars: (id) => ({ id }) },
  { name: 'backups limit huge', rest: (id) => ['GET', `/api/v1/servers/${id}/backups?limit=99999999999`], gql: 'query($id:ID!,$l:Int){backups(serverId:$id,limit:$l){items{id}}}', vars: (id) => ({ id, l: 99999999999 }) },
  { name: 'backup bad id', rest: (id) => ['GET', `/api/v1/servers/${id}/backups/abc`], gql: 'query($id:ID!){backup(serverId:$id,backupId:"abc"){id}}', vars: (id) => ({ id }) },
  { name: 'backup missing', rest: (id) => ['GET', `/api/v1/servers/${id}/backups/00000000-0000-4000-8000-000000000000`], gql: 'query($id:ID!){backup(serverId:$id,backupId:"00000000-0000-4000-8000-000000000000"){id}}', vars: (id) => ({ id }) },
  { name: 'schedules', rest: (id) => ['GET', `/api/v1/servers/${id}/schedules`], gql: 'query($id:ID!){schedules(serverId:$id){items{id}}}', vars: (id) => ({ id }) },
  { name: 'schedule bad id', rest: (id) => ['GET', `/api/v1/servers/${id}/schedules/abc`], gql: 'query($id:ID!){schedule(serverId:$id,scheduleId:"abc"){id}}', vars: (id) => ({ id }) },
  { name: 'startup', rest: (id) => ['GET', `/api/v1/servers/${id}/startup`], gql: 'query($id:ID!){serverStartup(serverId:$id){startup}}', vars: (id) => ({ id }) },
  { name: 'subusers', rest: (id) => ['GET', `/api/v1/servers/${id}/subusers`], gql: 'query($id:ID!){subusers(serverId:$id){items{email}}}', vars: (id) => ({ id }) },
  { name: 'activity', rest: (id) => ['GET', `/api/v1/servers/${id}/activity`], gql: 'query($id:ID!){serverActivity(serverId:$id){items{event}}}', vars: (id) => ({ id }) },
  { name: 'activity bad since', rest: (id) => ['GET', `/api/v1/servers/${id}/activity?since=garbage`], gql: 'query($id:ID!){serverActivity(serverId:$id,filter:{since:"garbage"}){items{event}}}', vars: (id) => ({ id }) },
  { name: 'activity empty event', rest: (id) => ['GET', `/api/v1/servers/${id}/activity?event=`], gql: 'query($id:ID!){serverActivity(serverId:$id,filter:{event:""}){items{event}}}', vars: (id) => ({ id }) },
  { name: 'sftp', rest: (id) => ['GET', `/api/v1/servers/${id}/sftp`], gql: 'query($id:ID!){sftpDetails(serverId:$id){host}}', vars: (id) => ({ id }) },
  { name: 'console token', rest: (id) => ['GET', `/api/v1/servers/${id}/console-token`], gql: 'query($id:ID!){consoleToken(serverId:$id){socket}}', vars: (id) => ({ id }) },
  // invalid mutations (nothing changes)
  { name: 'mkdir ..', rest: (id) => ['POST', `/api/v1/servers/${id}/files/directory`, { path: '../x' }], gql: 'mutation($id:ID!){createDirectory(serverId:$id,path:"../x"){name}}', vars: (id) => ({ id }) },
  { name: 'mkdir empty', rest: (id) => ['POST', `/api/v1/servers/${id}/files/directory`, { path: '' }], gql: 'mutation($id:ID!){createDirectory(serverId:$id,path:""){name}}', vars: (id) => ({ id }) },
  { name: 'rename to ..', rest: (id) => ['POST', `/api/v1/servers/${id}/files/rename`, { from: 'dir/nope', to: '../../x' }], gql: 'mutation($id:ID!){renameFile(serverId:$id,from:"dir/nope",to:"../../x"){name}}', vars: (id) => ({ id }) },
  { name: 'delete []', rest: (id) => ['POST', `/api/v1/servers/${id}/files/delete`, { paths: [] }], gql: 'mutation($id:ID!){deleteFiles(serverId:$id,paths:[])}', vars: (id) => ({ id }) },
  { name: 'delete ..', rest: (id) => ['POST', `/api/v1/servers/${id}/files/delete`, { paths: ['..'] }], gql: 'mutation($id:ID!){deleteFiles(serverId:$id,paths:[".."])}', vars: (id) => ({ id }) },
  { name: 'chmod setuid', rest: (id) => ['POST', `/api/v1/servers/${id}/files/chmod`, { path: 'dir', mode: '4755' }], gql: 'mutation($id:ID!){chmodFile(serverId:$id,path:"dir",mode:"4755"){name}}', vars: (id) => ({ id }) },
  { name: 'chmod empty', rest: (id) => ['POST', `/api/v1/servers/${id}/files/chmod`, { path: 'dir', mode: '' }], gql: 'mutation($id:ID!){chmodFile(serverId:$id,path:"dir",mode:""){name}}', vars: (id) => ({ id }) },
  { name: 'compress ..', rest: (id) => ['POST', `/api/v1/servers/${id}/files/compress`, { paths: ['dir'], destination: '../a.tar.gz' }], gql: 'mutation($id:ID!){compressFiles(serverId:$id,paths:["dir"],destination:"../a.tar.gz"){name}}', vars: (id) => ({ id }) },
  { name: 'write ..', rest: (id) => ['PUT', `/api/v1/servers/${id}/files/contents?path=${q('../x.txt')}`, 'RAW'], gql: 'mutation($id:ID!){writeFile(serverId:$id,path:"../x.txt",contents:"x"){name}}', vars: (id) => ({ id }) },
  { name: 'schedule bad cron', rest: (id) => ['POST', `/api/v1/servers/${id}/schedules`, { name: 'x', cron: 'bad', tasks: [] }], gql: 'mutation($id:ID!){createSchedule(serverId:$id,input:{name:"x",cron:"bad",tasks:[]}){id}}', vars: (id) => ({ id }) },
  { name: 'schedule empty name', rest: (id) => ['POST', `/api/v1/servers/${id}/schedules`, { name: '', cron: '* * * * *', tasks: [] }], gql: 'mutation($id:ID!){createSchedule(serverId:$id,input:{name:"",cron:"* * * * *",tasks:[]}){id}}', vars: (id) => ({ id }) },
  { name: 'schedule bad tz', rest: (id) => ['POST', `/api/v1/servers/${id}/schedules`, { name: 'x', cron: '* * * * *', timezone: 'Mars/Base', tasks: [] }], gql: 'mutation($id:ID!){createSchedule(serverId:$id,input:{name:"x",cron:"* * * * *",timezone:"Mars/Base",tasks:[]}){id}}', vars: (id) => ({ id }) },
  { name: 'schedule huge offset', rest: (id) => ['POST', `/api/v1/servers/${id}/schedules`, { name: 'x', cron: '* * * * *', tasks: [{ action: 'command', payload: { command: 'say' }, offsetSeconds: 3000000000 }] }], gql: 'mutation($id:ID!,$t:[ScheduleTaskInput!]!){createSchedule(serverId:$id,input:{name:"x",cron:"* * * * *",tasks:$t}){id}}', vars: (id) => ({ id, t: [{ action: 'command', payload: { command: 'say' }, offsetSeconds: 3000000000 }] }) },
  { name: 'startup unknown var', rest: (id) => ['PUT', `/api/v1/servers/${id}/startup`, { variables: { NOPE: 'x' } }], gql: 'mutation($id:ID!){updateServerStartup(serverId:$id,variables:{NOPE:"x"}){startup}}', vars: (id) => ({ id }) },
  { name: 'startup empty', rest: (id) => ['PUT', `/api/v1/servers/${id}/startup`, { variables: {} }], gql: 'mutation($id:ID!){updateServerStartup(serverId:$id,variables:{}){startup}}', vars: (id) => ({ id }) },
  { name: 'startup MOTD number', rest: (id) => ['PUT', `/api/v1/servers/${id}/startup`, { variables: { MAX_PLAYERS: 99999999999999 } }], gql: 'mutation($id:ID!){updateServerStartup(serverId:$id,variables:{MAX_PLAYERS:99999999999999}){startup}}', vars: (id) => ({ id }) },
  { name: 'subuser bad key', rest: (id) => ['POST', `/api/v1/servers/${id}/subusers`, { email: 'nobody@example.com', permissions: ['nope.key'] }], gql: 'mutation($id:ID!){createSubuser(serverId:$id,input:{email:"nobody@example.com",permissions:["nope.key"]}){email}}', vars: (id) => ({ id }) },
  { name: 'subuser empty email', rest: (id) => ['POST', `/api/v1/servers/${id}/subusers`, { email: '', permissions: [] }], gql: 'mutation($id:ID!){createSubuser(serverId:$id,input:{email:"",permissions:[]}){email}}', vars: (id) => ({ id }) },
  { name: 'subuser patch ..paths', rest: (id) => ['PATCH', `/api/v1/servers/${id}/subusers/00000000-0000-4000-8000-000000000000`, { paths: ['../x'] }], gql: 'mutation($id:ID!){updateSubuser(serverId:$id,userId:"00000000-0000-4000-8000-000000000000",input:{paths:["../x"]}){email}}', vars: (id) => ({ id }) },
  { name: 'backup restore missing', rest: (id) => ['POST', `/api/v1/servers/${id}/backups/00000000-0000-4000-8000-000000000000/restore`, {}], gql: 'mutation($id:ID!){restoreBackup(serverId:$id,backupId:"00000000-0000-4000-8000-000000000000"){id}}', vars: (id) => ({ id }) },
  { name: 'backup bad name', rest: (id) => ['POST', `/api/v1/servers/${id}/backups`, { name: 'x'.repeat(5000) }], gql: `mutation($id:ID!){createBackup(serverId:$id,input:{name:"${'x'.repeat(5000)}"}){id}}`, vars: (id) => ({ id }) },
];

function restOutcome(r: { status: number; body: any }): string {
  if (r.status >= 400) return `ERR ${r.body?.error?.code}`;
  return 'OK';
}
function gqlOutcome(r: { status: number; body: any }): string {
  if (r.body?.errors?.length) return `ERR ${r.body.errors[0].extensions?.code}`;
  if (r.status !== 200) return `HTTP ${r.status}`;
  return 'OK';
}

test('every case answers the same outcome over REST and GraphQL for every caller', async () => {
  const diffs: string[] = [];
  const all: string[] = [];
  for (const c of cases) {
    for (const [actor, token] of Object.entries(who)) {
      const [method, path, body] = c.rest(serverId);
      const rr =
        body === 'RAW'
          ? await p.request(method, path, { token, raw: 'x', headers: { 'content-type': 'application/octet-stream' } })
          : await p.request(method, path, { token, ...(body !== undefined ? { body } : {}) });
      const gr = await gql(p, c.gql, c.vars(serverId), { token });
      const a = restOutcome(rr);
      const b = gqlOutcome(gr);
      const line = `${c.name} [${actor}] REST ${rr.status} ${a} | GQL ${b}`;
      all.push(line);
      // a variable beyond Int is refused by GraphQL's variable coercion before any resolver runs (the
      // GraphQL spec's order), so callers who may not act get VALIDATION_ERROR there: not compared
      if (c.name === 'schedule huge offset' && actor !== 'owner' && actor !== 'admin' && actor !== 'withKeys') continue;
      if (a !== b) diffs.push(line + ` | rest=${rr.text.slice(0, 200)} | gql=${gr.text.slice(0, 300)}`);
    }
  }
  expect(diffs).toEqual([]);
}, 300_000);
