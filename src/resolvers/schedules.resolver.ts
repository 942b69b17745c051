/** The GraphQL twin of src/rest/schedules.routes.ts. */
import { Arg, Ctx, ID, Int, Mutation, Query, Resolver } from 'type-graphql';
import type { GraphQLContext } from '../graphql/context.js';
import { toPage } from '../schema/page.js';
import { CreateScheduleInput, ScheduleRunPage, ScheduleRunType, SchedulePage, ScheduleType, UpdateScheduleInput, type ScheduleTaskInput } from '../schema/schedule.js';
import { parsePagination } from '../validation/pagination.js';
import { given } from './util.js';

/** An input as REST would get it from JSON: absent and null fields left out, tasks as plain objects. */
function body(input: CreateScheduleInput | UpdateScheduleInput): Record<string, unknown> {
  const out = given(input);
  if (Array.isArray(input.tasks)) out.tasks = input.tasks.map((t: ScheduleTaskInput) => given(t));
  return out;
}

@Resolver()
export class SchedulesResolver {
  @Query(() => SchedulePage, { description: 'GET /servers/:id/schedules (schedule.read).' })
  async schedules(
    @Arg('serverId', () => ID) serverId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<SchedulePage> {
    return toPage(await ctx.services.schedules.list(ctx.actor, serverId, parsePagination(given({ page, limit }))));
  }

  @Query(() => ScheduleType, { description: 'GET /servers/:id/schedules/:scheduleId (schedule.read).' })
  schedule(@Arg('serverId', () => ID) serverId: string, @Arg('scheduleId', () => ID) scheduleId: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.schedules.get(ctx.actor, serverId, scheduleId);
  }

  @Mutation(() => ScheduleType, { description: 'POST /servers/:id/schedules (schedule.create).' })
  createSchedule(@Arg('serverId', () => ID) serverId: string, @Arg('input', () => CreateScheduleInput) input: CreateScheduleInput, @Ctx() ctx: GraphQLContext) {
    return ctx.services.schedules.create(ctx.actor, serverId, body(input));
  }

  @Mutation(() => ScheduleType, { description: 'PATCH /servers/:id/schedules/:scheduleId (schedule.update).' })
  updateSchedule(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('scheduleId', () => ID) scheduleId: string,
    @Arg('input', () => UpdateScheduleInput) input: UpdateScheduleInput,
    @Ctx() ctx: GraphQLContext,
  ) {
    return ctx.services.schedules.update(ctx.actor, serverId, scheduleId, body(input));
  }

  @Mutation(() => Boolean, { description: 'DELETE /servers/:id/schedules/:scheduleId (schedule.delete). Always true.' })
  async deleteSchedule(@Arg('serverId', () => ID) serverId: string, @Arg('scheduleId', () => ID) scheduleId: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.schedules.remove(ctx.actor, serverId, scheduleId);
    return true;
  }

  @Mutation(() => ScheduleRunType, { description: 'POST /servers/:id/schedules/:scheduleId/run (schedule.update): runs it now, enabled or not; answers with the run just started.' })
  runSchedule(@Arg('serverId', () => ID) serverId: string, @Arg('scheduleId', () => ID) scheduleId: string, @Ctx() ctx: GraphQLContext) {
    return ctx.services.schedules.run(ctx.actor, serverId, scheduleId);
  }

  @Query(() => ScheduleRunPage, { description: 'GET /servers/:id/schedules/:scheduleId/runs (schedule.read), newest first.' })
  async scheduleRuns(
    @Arg('serverId', () => ID) serverId: string,
    @Arg('scheduleId', () => ID) scheduleId: string,
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<ScheduleRunPage> {
    return toPage(await ctx.services.schedules.runs(ctx.actor, serverId, scheduleId, parsePagination(given({ page, limit }))));
  }
}
