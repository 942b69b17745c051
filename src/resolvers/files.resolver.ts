/** The GraphQL twin of src/rest/files.routes.ts, for text: uploads and downloads stay REST. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import { AppError } from '../errors.js';
import type { GraphQLContext } from '../graphql/context.js';
import { FileContentsType, FileEntryType, FilePageType, SftpDetailsType } from '../schema/files.js';
import { parseFileListQuery, parseFileSearchQuery } from '../validation/files.js';
import { given } from './util.js';

@Resolver()
export class FilesResolver {
  @Query(() => FilePageType, { description: 'GET /servers/:id/files (file.read).' })
  async files(
    @Arg('serverId', () => ID) serverId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('path', { nullable: true }) path?: string,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<FilePageType> {
    const r = await ctx.services.files.list(ctx.actor, serverId, parseFileListQuery(given({ path, page, limit })));
    return { items: r.items, ...r.meta };
  }

  @Query(() => SftpDetailsType, { description: 'GET /servers/:id/sftp (file.sftp): how to connect over SFTP.' })
  sftpDetails(@Arg('serverId', () => ID) serverId: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.sftp.details(ctx.actor, serverId);
  }

  @Query(() => [FileEntryType], { description: 'GET /servers/:id/files/search (file.read).' })
  fileSearch(@Arg('serverId', () => ID) serverId: string, @Arg('query') query: string, @Ctx() ctx: GraphQLContext, @Arg('path', { nullable: true }) path?: string) {
    return ctx.services.files.search(ctx.actor, serverId, parseFileSearchQuery(given({ path, query })));
  }

  @Query(() => FileContentsType, { description: 'GET /servers/:id/files/contents (file.read-content): text files only (a binary file is INVALID_STATE: download it over REST).' })
  async fileContents(@Arg('serverId', () => ID) serverId: string, @Arg('path') path: string, @Ctx() ctx: GraphQLContext): Promise<FileContentsType> {
    const r = await ctx.services.files.contents(ctx.actor, serverId, path);
    if (!r.text) throw AppError.invalidState('This file is not UTF-8 text: download it with GET /api/v1/servers/:id/files/download.');
    return { path: r.path, contents: r.bytes.toString('utf8') };
  }

  @Mutation(() => FileEntryType, { description: 'PUT /servers/:id/files/contents (file.update, or file.create for a new file).' })
  async writeFile(@Arg('serverId', () => ID) serverId: string, @Arg('path') path: string, @Arg('contents') contents: string, @Ctx() ctx: GraphQLContext) {
    return (await ctx.services.files.writeText(ctx.actor, serverId, path, contents)).entry;
  }

  @Mutation(() => FileEntryType, { description: 'POST /servers/:id/files/rename (file.update).' })
  renameFile(@Arg('serverId', () => ID) serverId: string, @Arg('from') from: string, @Arg('to') to: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.files.rename(ctx.actor, serverId, { from, to });
  }

  @Mutation(() => FileEntryType, { description: 'POST /servers/:id/files/copy (file.create).' })
  copyFile(@Arg('serverId', () => ID) serverId: string, @Arg('path') path: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.files.copy(ctx.actor, serverId, { path });
  }

  @Mutation(() => Boolean, { description: 'POST /servers/:id/files/delete (file.delete). Always true.' })
  async deleteFiles(@Arg('serverId', () => ID) serverId: string, @Arg('paths', () => [String]) paths: string[], @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.files.remove(ctx.actor, serverId, { paths });
    return true;
  }

  @Mutation(() => FileEntryType, { description: 'POST /servers/:id/files/directory (file.create).' })
  createDirectory(@Arg('serverId', () => ID) serverId: string, @Arg('path') path: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.files.mkdir(ctx.actor, serverId, { path });
  }

  @Mutation(() => FileEntryType, { description: 'POST /servers/:id/files/chmod (file.update).' })
  chmodFile(@Arg('serverId', () => ID) serverId: string, @Arg('path') path: string, @Arg('mode') mode: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.files.chmod(ctx.actor, serverId, { path, mode });
  }

  @Mutation(() => FileEntryType, { description: 'POST /servers/:id/files/compress (file.archive): a .tar.gz of `paths` at `destination` (default: archive-<date>_<time>.tar.gz in the folder they share).' })
  compressFiles(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('paths', () => [String]) paths: string[],
    @Arg('destination', () => String, { nullable: true }) destination: string | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.files.compress(ctx.actor, serverId, { paths, destination });
  }

  @Mutation(() => [FileEntryType], { description: 'POST /servers/:id/files/decompress (file.archive): the entries made at the top of `destination` (default: the archive\u2019s folder).' })
  decompressFile(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('path') path: string,
    @Arg('destination', () => String, { nullable: true }) destination: string | null,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.files.decompress(ctx.actor, serverId, { path, destination });
  }
}
