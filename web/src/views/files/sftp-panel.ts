/**
 * How to reach the server's files over SFTP (file.sftp): the command to type, the password to use,
 * and the node's host key fingerprint to compare with what the client shows the first time.
 */
import { describe, gql } from '../../api';
import { h } from '../../dom';

const Q_SFTP = `query($id: ID!) { sftpDetails(serverId: $id) { host port username fingerprint } }`;

interface SftpDetails {
  host: string;
  port: number | null;
  username: string;
  fingerprint: string | null;
}

export function sftpPanel(serverId: string): HTMLElement {
  const body = h('div', null, h('p', { className: 'muted' }, 'Loading…'));
  const el = h('section', { className: 'card sftp', 'aria-label': 'SFTP access' }, h('h2', null, 'SFTP'), body);
  void gql<{ sftpDetails: SftpDetails }>(Q_SFTP, { id: serverId }).then(
    ({ sftpDetails: d }) => {
      body.replaceChildren(
        d.port === null
          ? h('p', null, 'The node has not reported its SFTP server yet. Try again in a minute.')
          : h('p', null, 'Connect with FileZilla, WinSCP or: ', h('code', { className: 'sftp-command' }, `sftp -P ${d.port} ${d.username}@${d.host}`)),
        h('p', null, 'Log in with your account\u2019s password. You get the same rights here as in the file browser.'),
        d.fingerprint ? h('p', null, 'Host key fingerprint: ', h('code', { className: 'sftp-fingerprint' }, d.fingerprint)) : '',
      );
    },
    (err: unknown) => body.replaceChildren(h('p', { role: 'alert' }, `Could not load the SFTP details: ${describe(err)}`)),
  );
  return el;
}
