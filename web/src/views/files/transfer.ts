/**
 * Uploads and downloads of the file browser, over REST (GraphQL carries text only): an upload is one
 * multipart POST with progress events; a download is a link the browser follows with its cookie.
 */
import { ApiError } from '../../api';

const base = (serverId: string) => `/api/v1/servers/${encodeURIComponent(serverId)}/files`;

/** The address of a file's download (an attachment). */
export function downloadUrl(serverId: string, path: string): string {
  return `${base(serverId)}/download?path=${encodeURIComponent(path)}`;
}

/** Uploads `files` into the folder `dir`; `onProgress` gets the fraction sent (0..1). */
export function uploadFiles(serverId: string, dir: string, files: readonly File[], onProgress: (fraction: number) => void): Promise<void> {
  const form = new FormData();
  for (const f of files) form.append('file', f, f.name);
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('POST', `${base(serverId)}/upload?path=${encodeURIComponent(dir)}`);
    xhr.withCredentials = true;
    xhr.upload.onprogress = (e) => e.lengthComputable && onProgress(e.loaded / e.total);
    xhr.onerror = () => reject(new ApiError('NETWORK', 'The upload was cut off: check your connection and upload again.'));
    xhr.onload = () => {
      if (xhr.status === 201) return resolve();
      let error: { code?: string; message?: string; details?: Record<string, unknown> } = {};
      try {
        error = (JSON.parse(xhr.responseText) as { error?: typeof error }).error ?? {};
      } catch {
        /* not JSON: the status says it */
      }
      reject(new ApiError(error.code ?? 'ERROR', error.message ?? `The upload failed (HTTP ${xhr.status}).`, error.details ?? {}));
    };
    xhr.send(form);
  });
}
