/* script.c - the scripting room: start-up, INFO lines and the rewrite of function libraries
 * (see script.h). Loop thread. */
#include "server/script/script.h"

#include "server/reply.h"
#include "server/script/engine.h"

int script_init(char *err, size_t errlen)
{
    if (engine_init(err, errlen) < 0) return -1;
    eval__init();
    function__init();
    return 0;
}

void script_deinit(void)
{
    function__deinit();
    eval__deinit();
    engine_deinit();
}

void script_info_memory(buf_t *b)
{
    eval__info(b);
    function__info(b);
}

void script__container_cmd(client_t *c)
{
    reply_arity_error(c);
}
