/**
 * The GraphQL twin of the REST nodes resource and POST /admin/nodes/:id/token (administrators only;
 * each field spends its REST twin's rate-limit bucket: src/operations/table.ts, src/graphql/buckets.ts).
 */
import { Arg, Ctx, FieldResolver, ID, Int, Mutation, Query, Resolver, Root } from 'type-graphql';
import type { Node } from '../entities/Node.js';
import type { GraphQLContext } from '../graphql/context.js';
import { requireAdmin } from '../services/actor.js';
import type { Allocation } from '../services/servers.service.js';
import { AllocationType, CreateNodeInput, NodeChoicePage, NodePage, NodeTokenType, NodeType, RegisteredNode, UpdateNodeInput } from '../schema/node.js';
import { given } from './util.js';
import { parsePagination } from '../validation/pagination.js';

@Resolver(() => NodeType)
export class NodesResolver {
  @Query(() => NodePage, { description: 'GET /nodes (administrators only).' })
  async nodes(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<NodePage> {
    const r = await ctx.services.nodes.list(ctx.actor, parsePagination(given({ page, limit })));
    for (const v of r.items) ctx.loaders.allocation.prime(v.node.id, v.allocated);
    return { items: r.items.map((v) => v.node), ...r.meta } as NodePage;
  }

  @Query(() => NodeChoicePage, { description: 'GET /users/me/nodes: the nodes you may create servers on, with what they can still allocate.' })
  async myNodes(
    @Ctx() ctx: GraphQLContext,
    @Arg('page', () => Int, { nullable: true }) page?: number,
    @Arg('limit', () => Int, { nullable: true }) limit?: number,
  ): Promise<NodeChoicePage> {
    const r = await ctx.services.nodes.choices(ctx.actor, parsePagination(given({ page, limit })));
    return { items: r.items, ...r.meta } as NodeChoicePage;
  }

  @Query(() => NodeType, { description: 'GET /nodes/:id (administrators only).' })
  async node(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<Node> {
    const v = await ctx.services.nodes.get(ctx.actor, id);
    ctx.loaders.allocation.prime(v.node.id, v.allocated);
    return v.node;
  }

  @Mutation(() => RegisteredNode, { description: 'POST /nodes (administrators only): registers a node and issues its first agent token.' })
  async createNode(@Arg('input', () => CreateNodeInput) input: CreateNodeInput, @Ctx() ctx: GraphQLContext): Promise<RegisteredNode> {
    const v = await ctx.services.nodes.create(ctx.actor, given(input));
    ctx.loaders.allocation.prime(v.node.id, v.allocated);
    return { node: v.node, token: v.token };
  }

  @Mutation(() => NodeType, { description: 'PATCH /nodes/:id (administrators only): renames, moves or resizes a node; memory and disk not below what its servers have allocated (INVALID_STATE).' })
  async updateNode(@Arg('id', () => ID) id: string, @Arg('input', () => UpdateNodeInput) input: UpdateNodeInput, @Ctx() ctx: GraphQLContext): Promise<Node> {
    const v = await ctx.services.nodes.update(ctx.actor, id, given(input, { keepNull: ['cpuCores'] }));
    ctx.loaders.allocation.prime(v.node.id, v.allocated);
    return v.node;
  }

  @Mutation(() => Boolean, { description: 'DELETE /nodes/:id (administrators only). NODE_HAS_SERVERS while servers remain. Always true.' })
  async deleteNode(@Arg('id', () => ID) id: string, @Ctx() ctx: GraphQLContext): Promise<boolean> {
    await ctx.services.nodes.remove(ctx.actor, id);
    return true;
  }

  @Mutation(() => NodeTokenType, { description: 'POST /admin/nodes/:id/token (administrators only): a new agent secret, shown once.' })
  async createNodeToken(@Arg('nodeId', () => ID) nodeId: string, @Ctx() ctx: GraphQLContext): Promise<NodeTokenType> {
    return ctx.services.nodes.rotateToken(ctx.actor, nodeId);
  }

  @FieldResolver(() => AllocationType, { description: 'Memory and disk allocated to the node\'s servers (administrators only).' })
  allocated(@Root() node: Node, @Ctx() ctx: GraphQLContext): Promise<Allocation> {
    requireAdmin(ctx.actor);
    return ctx.loaders.allocation.load(node.id);
  }
}
