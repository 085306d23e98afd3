/*
 * cuda_fe_shim.cpp - the one definition that cudnn-frontend's dynamic-loading mode
 * (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, see the Makefile) asks of its user: the handle of the cuDNN
 * library through which it looks up every cuDNN call (cudnn_frontend_shim.h: extern void
 * *cudnn_dlhandle). The plugin links libcudnn.so.9 itself (DT_NEEDED), so this dlopen at load time
 * only takes another reference to the library already mapped; NULL (no cuDNN 9) makes every
 * frontend call fail with its own error, which cuda_sdpa.cpp / cuda_conv.cpp record as the reason to
 * fall back.
 */
#include <dlfcn.h>

namespace cudnn_frontend {
void *cudnn_dlhandle = dlopen("libcudnn.so.9", RTLD_NOW | RTLD_GLOBAL);
}
