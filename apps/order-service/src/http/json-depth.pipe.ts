import { BadRequestException, Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';

/**
 * Refuses request bodies nested deeper than any order can be. The validation that follows walks a
 * body recursively, so a 20,000-deep array would exhaust the stack there and answer 500.
 * The walk here is iterative.
 */
@Injectable()
export class JsonDepthPipe implements PipeTransform {
  constructor(private readonly maxDepth = 16) {}

  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type !== 'body') return value;
    const stack: Array<{ node: unknown; depth: number }> = [{ node: value, depth: 0 }];
    while (stack.length > 0) {
      const { node, depth } = stack.pop()!;
      if (node === null || typeof node !== 'object') continue;
      if (depth >= this.maxDepth) throw new BadRequestException(`The request body is nested deeper than ${this.maxDepth} levels.`);
      for (const child of Object.values(node)) stack.push({ node: child, depth: depth + 1 });
    }
    return value;
  }
}
