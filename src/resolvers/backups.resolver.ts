/** The GraphQL twin of src/rest/backups.routes.ts (downloads stay REST). */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver, Root, Subscription } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { presentBackup } from '../rest/presenters.js';
import { BackupPage, BackupType, CreateBackupInput } from '../schema/backup.js';
import type { Backup } from '../entities/Backup.js';
import { parsePagination } from '../validation/pagination.js';
import { given } from './util.js';

@Resolver()
export class BackupsResolver {
  @Query(() => BackupPage, { description: 'GET /servers/:id/backups (backup.read), newest first.' })
  async backups(
    @Arg('serverId', () => ID) serverId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<BackupPage> {
    const r = await ctx.services.backups.list(ctx.actor, serverId, parsePagination(given({ page, limit })));
    return { items: r.items.map(presentBackup), ...r.meta } as unknown as BackupPage;
  }

  @Query(() => BackupType, { description: 'GET /servers/:id/backups/:backupId (backup.read).' })
  async backup(@Arg('serverId', () => ID) serverId: string, @Arg('backupId', () => ID) backupId: string, @Ctx() ctx: GraphQLContext) {
    return presentBackup(await ctx.services.backups.get(ctx.actor, serverId, backupId));
  }

  @Mutation(() => BackupType, { description: 'POST /servers/:id/backups (backup.create): pending until the node is done.' })
  async createBackup(@Arg('serverId', () => ID) serverId: string, @Ctx() ctx: GraphQLContext, @Arg('input', () => CreateBackupInput, { nullable: true }) input?: CreateBackupInput) {
    return presentBackup(await ctx.services.backups.create(ctx.actor, serverId, given(input)));
  }

  @Mutation(() => BackupType, { description: 'POST /servers/:id/backups/:backupId/restore (backup.restore): the server must be offline.' })
  async restoreBackup(@Arg('serverId', () => ID) serverId: string, @Arg('backupId', () => ID) backupId: string, @Ctx() ctx: GraphQLContext, @Arg('truncate', { nullable: true }) truncate?: boolean) {
    return presentBackup(await ctx.services.backups.restore(ctx.actor, serverId, backupId, given({ truncate })));
  }

  @Mutation(() => BackupType, { description: 'POST /servers/:id/backups/:backupId/lock (backup.delete).' })
  async lockBackup(@Arg('serverId', () => ID) serverId: string, @Arg('backupId', () => ID) backupId: string, @Ctx() ctx: GraphQLContext) {
    return presentBackup(await ctx.services.backups.setLocked(ctx.actor, serverId, backupId, true));
  }

  @Mutation(() => BackupType, { description: 'POST /servers/:id/backups/:backupId/unlock (backup.delete).' })
  async unlockBackup(@Arg('serverId', () => ID) serverId: string, @Arg('backupId', () => ID) backupId: string, @Ctx() ctx: GraphQLContext) {
    return presentBackup(await ctx.services.backups.setLocked(ctx.actor, serverId, backupId, false));
  }

  @Mutation(() => Boolean, { description: 'DELETE /servers/:id/backups/:backupId (backup.delete): not a locked one.' })
  async deleteBackup(@Arg('serverId', () => ID) serverId: string, @Arg('backupId', () => ID) backupId: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.backups.remove(ctx.actor, serverId, backupId);
    return true;
  }

  @Subscription(() => BackupType, {
    name: 'serverBackups',
    description: 'Backups of a server as they are created, progress and end (backup.read).',
    subscribe: (async ({ args, context }: { args: { serverId: string }; context: GraphQLContext }) => context.services.backups.subscribe(context.actor, args.serverId)) as any,
  })
  serverBackupChanged(@Arg('serverId', () => ID) _serverId: string, @Root() backup: Backup) {
    return presentBackup(backup);
  }
}
