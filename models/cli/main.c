/* The qkv program (placeholder until the subcommands land). */
#include <stdio.h>

int main(void)
{
    puts("qkv");
    return 0;
}
